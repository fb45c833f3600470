package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The fault tests: real processes, under steady traffic, with one thing
// going wrong at a time. docs/failure-modes.md states what each proves.
// Durations are logged; the only time limits are generous bounds against a
// hang.

// cafe is the file-mode setup of the fault tests: two backends, the cafe
// Ingress, the control plane over mutual TLS, and an Envoy serving it.
type cafe struct {
	dir         string
	coffee, tea *framework.Backend
	cp          *framework.ControlPlane
	envoy       *framework.Envoy
}

func startCafe(t *testing.T) *cafe {
	t.Helper()
	b := echoBackends(t, "coffee", "tea")
	fm := startFileMode(t, framework.CertGen(t),
		manifest{"services.yaml", servicesYAML(b[0], b[1])},
		manifest{"cafe.yaml", framework.CafeIngressYAML("default", "coffee")})
	c := &cafe{dir: fm.dir, coffee: b[0], tea: b[1], cp: fm.cp, envoy: fm.envoy}
	framework.Eventually(t, convergeTimeout, "first routes served", func() error {
		return all(c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee"),
			c.envoy.Expect("tea.example.com", "/", http.StatusOK, "tea"))
	})
	framework.Eventually(t, convergeTimeout, "envoy in sync", func() error { return inSync(t, c.cp, c.envoy.NodeID) })
	return c
}

// traffic starts steady requests through Envoy to routes the faults must
// not disturb.
func (c *cafe) traffic(t *testing.T) *probe {
	return startProbe(t,
		func() error { return c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee") },
		func() error { return c.envoy.Expect("tea.example.com", "/", http.StatusOK, "tea") },
	)
}

// TestFaultControlPlaneKilled kills the control plane with SIGKILL: Envoy
// keeps serving every request; the restarted control plane serves the same
// versions, Envoy resyncs with it without rebuilding a listener, cluster or
// route table, and changes flow again.
func TestFaultControlPlaneKilled(t *testing.T) {
	c := startCafe(t)
	traffic := c.traffic(t)
	waitRounds(t, traffic, 10, "before the kill")
	versions := servedVersions(t, c.cp)
	builds := buildStats(t, c.envoy)
	pid := c.cp.Pid()

	c.cp.Kill()
	framework.Eventually(t, convergeTimeout, "envoy notices the control plane is gone", func() error {
		if n := stat(t, c.envoy, "control_plane.connected_state"); n != 0 {
			return fmt.Errorf("control_plane.connected_state = %d", n)
		}
		return nil
	})
	waitRounds(t, traffic, 50, "without a control plane")

	restarted := time.Now()
	c.cp.Restart(t)
	c.cp.WaitReady(t)
	framework.Eventually(t, 2*time.Minute, "envoy back in sync with the new process", func() error {
		return inSync(t, c.cp, c.envoy.NodeID)
	})
	t.Logf("measured: restart of a SIGKILLed control plane to Envoy in sync in %s (pid %d, then %d)",
		time.Since(restarted).Round(time.Millisecond), pid, c.cp.Pid())
	if got := servedVersions(t, c.cp); !maps.Equal(got, versions) {
		t.Errorf("versions after the restart %v, before %v: the same state must give the same versions", got, versions)
	}
	if diff := diffStats(builds, buildStats(t, c.envoy)); len(diff) > 0 {
		t.Errorf("envoy rebuilt configuration on reconnecting to the same state: %v", diff)
	} else {
		t.Logf("envoy rebuilt nothing: %d build counters and config dump versions and update times unchanged", len(builds))
	}
	waitRounds(t, traffic, 10, "after the restart")
	traffic.stop(t)

	// The new process drives Envoy: a change reaches it.
	writeManifest(t, c.dir, "cafe.yaml", framework.CafeIngressYAML("default", "tea"))
	took := framework.Eventually(t, convergeTimeout, "a change after the restart reaches envoy", func() error {
		return c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
	})
	t.Logf("measured: first change after the restart reached Envoy in %s", took.Round(time.Millisecond))
	assertNothingRejected(t, c.envoy)
}

// TestFaultGracefulShutdown stops the control plane with SIGTERM: it ends
// the xDS streams cleanly and exits 0, Envoy logs no warning or error about
// it, keeps its configuration and serves every request.
func TestFaultGracefulShutdown(t *testing.T) {
	c := startCafe(t)
	traffic := c.traffic(t)
	waitRounds(t, traffic, 10, "before the stop")
	logMark := len(c.envoy.Output())
	attempts := stat(t, c.envoy, xdsCluster+"upstream_cx_total")

	start := time.Now()
	c.cp.Stop()
	t.Logf("measured: SIGTERM to exit in %s", time.Since(start).Round(time.Millisecond))
	if code, ok := c.cp.ExitCode(); !ok || code != 0 {
		t.Errorf("the control plane exited with %d (exited normally: %v), want 0: %v", code, ok, c.cp.Exited())
	}
	out := c.cp.Output()
	if !strings.Contains(out, "xDS stream closed") || !strings.Contains(out, "node="+c.envoy.NodeID) ||
		!strings.Contains(out, "xDS server stopped") || strings.Contains(out, "did not stop gracefully") {
		t.Errorf("the control plane did not end the stream and stop gracefully:\n%s", c.cp.Tail(20))
	}
	framework.Eventually(t, convergeTimeout, "envoy notices the control plane is gone", func() error {
		if n := stat(t, c.envoy, "control_plane.connected_state"); n != 0 {
			return fmt.Errorf("control_plane.connected_state = %d", n)
		}
		return nil
	})
	// Envoy tries to reconnect, and finds nobody: that too belongs to the
	// normal disconnect, and must not be reported as an error.
	framework.Eventually(t, time.Minute, "envoy tries to reconnect", func() error {
		if n := stat(t, c.envoy, xdsCluster+"upstream_cx_total"); n <= attempts {
			return fmt.Errorf("%d connections", n)
		}
		return nil
	})
	waitRounds(t, traffic, 50, "without a control plane")
	traffic.stop(t)
	after := c.envoy.Output()[logMark:]
	complaint := regexp.MustCompile(`\]\[(warning|error|critical)\]`)
	for _, line := range strings.Split(after, "\n") {
		if complaint.MatchString(line) {
			t.Errorf("envoy complained about the shutdown: %s", line)
		}
	}
	t.Logf("envoy logged %d lines after the SIGTERM", strings.Count(after, "\n"))
	assertNothingRejected(t, c.envoy)
}

// TestFaultEnvoyRestart restarts Envoy: the new Envoy gets the whole
// current configuration (every resource ACKed, every route right) at once,
// and no request it answers is ever answered from partial configuration.
func TestFaultEnvoyRestart(t *testing.T) {
	c := startCafe(t)
	// A change before the restart, so that the current configuration is
	// not the first one the control plane built.
	writeManifest(t, c.dir, "cafe.yaml", framework.CafeIngressYAML("default", "tea"))
	framework.Eventually(t, convergeTimeout, "the change served", func() error {
		return c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
	})
	routes := []framework.RouteCase{
		{Host: "cafe.example.com", Path: "/coffee", Status: http.StatusOK, Backend: "tea"},
		{Host: "cafe.example.com", Path: "/tea", Status: http.StatusOK, Backend: "tea"},
		{Host: "tea.example.com", Path: "/", Status: http.StatusOK, Backend: "tea"},
	}

	// Steady traffic: while no Envoy listens, connections are refused;
	// any answer must be the right one.
	var mu sync.Mutex
	var refused, served int
	var wrong []string
	address := c.envoy.HTTPAddress // the listener port comes from the control plane: the same for the new Envoy
	traffic := startProbe(t, func() error {
		for _, r := range routes {
			got, err := framework.Get(address, r.Host, r.Path)
			mu.Lock()
			switch {
			case err != nil:
				refused++
			case got.Status != r.Status || got.Backend != r.Backend:
				wrong = append(wrong, fmt.Sprintf("%s%s: %s", r.Host, r.Path, got))
			default:
				served++
			}
			mu.Unlock()
		}
		return nil
	})
	waitRounds(t, traffic, 10, "before the restart")
	c.envoy.Stop()
	start := time.Now()
	fresh := framework.StartEnvoyWith(t, c.cp, framework.EnvoyOptions{NoWait: true})
	ready := framework.Eventually(t, convergeTimeout, "the new envoy ready", fresh.Ready)
	framework.Eventually(t, convergeTimeout, "the new envoy in sync", func() error { return inSync(t, c.cp, fresh.NodeID) })
	synced := time.Since(start)
	framework.Eventually(t, convergeTimeout, "the new envoy routes everything", func() error {
		for _, r := range routes {
			if err := fresh.Expect(r.Host, r.Path, r.Status, r.Backend); err != nil {
				return err
			}
		}
		return nil
	})
	t.Logf("measured: Envoy process start to ready (all listeners and clusters from xDS) in %s, to every resource ACKed in %s (promise: within a second)",
		ready.Round(time.Millisecond), synced.Round(time.Millisecond))
	waitRounds(t, traffic, 20, "after the restart")
	traffic.stop(t)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("traffic: %d answered, %d refused while no Envoy listened", served, refused)
	for _, w := range wrong {
		t.Errorf("a wrong answer around the restart: %s", w)
	}
	assertNothingRejected(t, fresh)
}

// TestFaultFloodOfBadIngresses adds 1,000 malformed Ingresses, one per
// file: the good Ingress keeps answering throughout, a change to it still
// reaches Envoy, and Envoy rejects nothing.
func TestFaultFloodOfBadIngresses(t *testing.T) {
	c := startCafe(t)
	// Routes that neither the flood nor the change touch.
	traffic := startProbe(t,
		func() error { return c.envoy.Expect("cafe.example.com", "/tea", http.StatusOK, "tea") },
		func() error { return c.envoy.Expect("tea.example.com", "/", http.StatusOK, "tea") },
	)
	waitRounds(t, traffic, 10, "before the flood")

	flood := filepath.Join(c.dir, "flood")
	if err := os.Mkdir(flood, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		writeManifest(t, flood, fmt.Sprintf("bad-%04d.yaml", i), malformedIngress(i))
	}
	// The flood is in Envoy: the last file's Ingress, with a Service that
	// does not exist, has its route, which answers 503.
	took := framework.Eventually(t, time.Minute, "the flood translated and served", func() error {
		return c.envoy.Expect("flood-996.example.com", "/", http.StatusServiceUnavailable, "")
	})
	t.Logf("measured: 1,000 malformed Ingresses written to served in %s", took.Round(time.Millisecond))
	start := time.Now()
	if err := c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee"); err != nil {
		t.Errorf("amid the flood, before the change: %v", err)
	}
	writeManifest(t, c.dir, "cafe.yaml", framework.CafeIngressYAML("default", "tea"))
	framework.Eventually(t, time.Minute, "a change to the good Ingress amid the flood reaches envoy", func() error {
		return c.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
	})
	t.Logf("measured: a change to the good Ingress next to 1,000 malformed ones reached Envoy in %s", time.Since(start).Round(time.Millisecond))
	if err := c.cp.Exited(); err != nil {
		t.Fatalf("the control plane exited: %v", err)
	}
	waitRounds(t, traffic, 10, "after the change")
	traffic.stop(t)
	assertNoRejections(t, c.envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
}

// malformedIngress is the i-th Ingress of the flood: each kind of breakage
// in turn, including documents that do not decode.
func malformedIngress(i int) string {
	host := fmt.Sprintf("flood-%d.example.com", i)
	rule := func(paths string) string {
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: flood-%d, namespace: default}\nspec:\n  rules:\n  - host: %s\n    http: {paths: [%s]}\n", i, host, paths)
	}
	switch i % 8 {
	case 0:
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: flood-%d, namespace: default}\nspec:\n  rules: [oops\n", i)
	case 1:
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: flood-%d, namespace: default}\nspec: {rules: 42}\n", i)
	case 2:
		return strings.Replace(rule("{path: /, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}"), host, "bad_host!"+host, 1)
	case 3:
		return rule("{path: relative, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}")
	case 4:
		return rule("{path: /, pathType: Prefix, backend: {service: {name: missing, port: {number: 80}}}}")
	case 5:
		return rule("{path: /, pathType: Prefix, backend: {}}")
	case 6:
		// Claims the good Ingress's host and path for the backend it has
		// before the change, and loses to it (same age, later name): were
		// it to win, the change would not show.
		return strings.Replace(rule("{path: /coffee, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}"), host, "cafe.example.com", 1)
	default:
		return fmt.Sprintf("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: flood-%d, namespace: default}\nspec:\n  tls: [{hosts: [%s], secretName: no-such-secret}]\n  rules:\n  - host: %s\n    http: {paths: [{path: \"/a b\", pathType: Exact, backend: {service: {name: coffee, port: {number: 80}}}}]}\n", i, host, host)
	}
}

// TestFaultAPIServerDown stops the API server the control plane watches for
// 30 seconds while Ingresses change behind it, through a second API server
// on the same etcd: Envoy keeps serving the last configuration and every
// request, and once the API server is back the control plane converges to
// the new state by itself, its informers having waited for the API server
// rather than backed off (the time it takes is logged, and recorded in
// docs/failure-modes.md).
func TestFaultAPIServerDown(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	const ns = "outage"

	netns := framework.NewNetns(t)
	backend := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", backend+"=netns-echo"))
	framework.Eventually(t, convergeTimeout, "echo in the namespace answers", func() error {
		return framework.Expect(backend, "direct", "/", http.StatusOK, "netns-echo")
	})
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	svc := service("web", 8080)
	svc.Namespace = ns
	create(t, kc.CoreV1().Services(ns), svc)
	slice := endpointSlice("web-1", "web", 8080, ready(netns.IP))
	slice.Namespace = ns
	create(t, kc.DiscoveryV1().EndpointSlices(ns), slice)
	newIngress := func(name, host, path string) {
		ing := ingress(name, nil, host, prefix(path, "web"))
		ing.Namespace = ns
		create(t, kc.NetworkingV1().Ingresses(ns), ing)
	}
	newIngress("stays", "stays.example.com", "/")
	newIngress("changes", "changes.example.com", "/old")
	newIngress("goes", "goes.example.com", "/")

	cp := framework.StartSecureControlPlane(t, framework.CertGen(t), "--kubeconfig", api.Kubeconfig, "--watch-classless", "--status-address", "203.0.113.9")
	framework.Eventually(t, 60*time.Second, "control plane ready", cp.Ready)
	envoy := framework.StartEnvoy(t, cp)
	before := []framework.RouteCase{
		{Host: "stays.example.com", Path: "/", Status: http.StatusOK, Backend: "netns-echo"},
		{Host: "changes.example.com", Path: "/old", Status: http.StatusOK, Backend: "netns-echo"},
		{Host: "goes.example.com", Path: "/", Status: http.StatusOK, Backend: "netns-echo"},
		{Host: "new.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
	}
	framework.Eventually(t, convergeTimeout, "the Ingresses served", func() error { return expectRoutes(envoy, before) })
	traffic := startProbe(t, func() error { return envoy.Expect("stays.example.com", "/", http.StatusOK, "netns-echo") })
	waitRounds(t, traffic, 10, "before the outage")

	behind := api.StartSecond(t)
	pid := cp.Pid()
	api.StopAPIServer(t)
	down := time.Now()
	ing := ingress("new", nil, "new.example.com", prefix("/", "web"))
	ing.Namespace = ns
	create(t, behind.NetworkingV1().Ingresses(ns), ing)
	changed, err := behind.NetworkingV1().Ingresses(ns).Get(ctx, "changes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	changed.Spec.Rules[0].HTTP.Paths[0].Path = "/new"
	update(t, behind.NetworkingV1().Ingresses(ns), changed)
	if err := behind.NetworkingV1().Ingresses(ns).Delete(ctx, "goes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The outage lasts 30 seconds, with traffic all along.
	rounds := traffic.completed()
	for time.Since(down) < 30*time.Second {
		if err := cp.Exited(); err != nil {
			t.Fatalf("the control plane exited during the outage: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d rounds of traffic during the outage", traffic.completed()-rounds)
	// Nothing could reach the control plane: Envoy still has the old state.
	if err := expectRoutes(envoy, before); err != nil {
		t.Errorf("the configuration changed while the API server was down: %v", err)
	}

	api.StartAgain(t)
	back := time.Now()
	after := []framework.RouteCase{
		{Host: "stays.example.com", Path: "/", Status: http.StatusOK, Backend: "netns-echo"},
		{Host: "changes.example.com", Path: "/new", Status: http.StatusOK, Backend: "netns-echo"},
		{Host: "changes.example.com", Path: "/old", Status: http.StatusNotFound, Backend: ""},
		{Host: "goes.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
		{Host: "new.example.com", Path: "/", Status: http.StatusOK, Backend: "netns-echo"},
	}
	framework.Eventually(t, 3*time.Minute, "the changes made during the outage served", func() error { return expectRoutes(envoy, after) })
	t.Logf("measured: API server back to the changes made during a %s outage served in %s",
		back.Sub(down).Round(time.Second), time.Since(back).Round(time.Millisecond))
	if cp.Pid() != pid || cp.Exited() != nil {
		t.Errorf("the control plane restarted or exited: %v", cp.Exited())
	}
	// The informers' reads waited out the outage (kube.APIServerWait),
	// rather than failing into client-go's backoff: the outage is told
	// once, and its end.
	if out := cp.Output(); strings.Count(out, "API server unreachable") != 1 || !strings.Contains(out, "API server reachable again") {
		t.Errorf("the control plane did not log one outage and its end:\n%s", cp.Tail(40))
	}
	waitRounds(t, traffic, 10, "after the outage")
	traffic.stop(t)
	assertNothingRejected(t, envoy)
}

func expectRoutes(envoy *framework.Envoy, routes []framework.RouteCase) error {
	for _, r := range routes {
		if err := envoy.Expect(r.Host, r.Path, r.Status, r.Backend); err != nil {
			return err
		}
	}
	return nil
}

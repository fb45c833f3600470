package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// TestRouteScopes runs `serve --route-scopes 8 --manifests DIR` with a
// SotW and a delta Envoy (issue 18): the HTTP listener's routes come in
// eight route configurations, a host's in the one its name hashes to, and
// the connection manager picks a request's by the same hash of its Host,
// before routing (an early header mutation's CEL expression). Each Envoy
// routes as with one route configuration: the cafe's table (exact and
// one-label wildcard hosts, path types, unknown hosts, 404 and 503), forty
// exact hosts spread over the scopes, asked for as sent, in upper case,
// with a port and with a trailing dot (which Envoy's domain matching
// ignores, and so must the hash), and a server alias. The scope header
// never reaches a backend, and a client's own cannot choose another scope.
// A new host is served after one update of its scope's route
// configuration, none of the others', and no change of the listener; a
// catch-all (a default backend) updates every scope, and then serves any
// Host no rule names, whatever its scope. Like TestVirtualHostDiscovery it
// mirrors ingress-nginx's test/e2e/lua/dynamic_configuration.go (a change
// applied to the running proxy without a reload); the rest of the suite
// runs with scopes under INGRESS_XDS_E2E_ROUTE_SCOPES=N.
func TestRouteScopes(t *testing.T) {
	const scopes, hosts = 8, 40
	b := echoBackends(t, "coffee", "tea")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", servicesYAML(b[0], b[1]))
	writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "coffee"))
	writeManifest(t, dir, "hosts.yaml", scopedHostsYAML(hosts))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--route-scopes", strconv.Itoa(scopes))
	cp.WaitReady(t)
	envoys := sotwAndDelta(t, cp)
	for _, e := range envoys {
		t.Cleanup(func() { assertNothingRejected(t, e.envoy) })
	}
	// The hosts must fall into several scopes for the test to mean
	// anything.
	used := map[int]bool{}
	for i := range hosts {
		used[envoy.RouteScope(scopedHost(i), scopes)] = true
	}
	if len(used) < scopes/2 {
		t.Fatalf("the %d hosts fall into %d of %d scopes", hosts, len(used), scopes)
	}

	for _, e := range envoys {
		t.Run(e.name+" routes as one route configuration", func(t *testing.T) {
			framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
				return e.envoy.Expect(scopedHost(hosts-1), "/", http.StatusOK, scopedBackend(hosts-1))
			})
			expectAll(t, e.envoy, framework.CafeRoutes())
			for i := range hosts {
				host, want := scopedHost(i), scopedBackend(i)
				for _, asked := range []string{host, strings.ToUpper(host), host + ":8080", host + "."} {
					if err := e.envoy.Expect(asked, "/menu", http.StatusOK, want); err != nil {
						t.Errorf("Host %s: %v", asked, err)
					}
				}
			}
			if err := e.envoy.Expect("alias.example.com", "/", http.StatusOK, scopedBackend(0)); err != nil {
				t.Errorf("the server alias of %s: %v", scopedHost(0), err)
			}
		})
		t.Run(e.name+" keeps the scope header its own", func(t *testing.T) {
			for i := range hosts {
				host := scopedHost(i)
				wrong := strconv.Itoa((envoy.RouteScope(host, scopes) + 1) % scopes)
				reply, err := echoWithHeader(e.envoy.HTTPAddress, host, envoy.RouteScopeHeader, wrong)
				if err != nil {
					t.Fatalf("Host %s with scope %s asked: %v", host, wrong, err)
				}
				if reply.Backend != scopedBackend(i) {
					t.Errorf("Host %s with scope %s asked: served by %q, want %q", host, wrong, reply.Backend, scopedBackend(i))
				}
				if v := reply.Header.Get(envoy.RouteScopeHeader); v != "" {
					t.Errorf("Host %s: the backend saw %s: %s", host, envoy.RouteScopeHeader, v)
				}
			}
		})
	}

	// The bootstrap's statistics keep a scope's update counts (read
	// below) but not the rest of its twelve RDS stats
	// (xds/bootstrap_stats.go).
	for _, e := range envoys {
		if dropped, err := e.envoy.Stats(`\.rds\.ingress_http/[0-9]+\.(update_time|version_text|update_attempt)$`); err != nil || len(dropped) > 0 {
			t.Errorf("%s: a scope's RDS stats beyond its update counts: %v (%v)", e.name, slices.Sorted(maps.Keys(dropped)), err)
		}
	}

	// A new exact host: its scope's route configuration alone.
	const added = "added.scopes.example.com"
	before := scopeUpdates(t, envoys[0].envoy, envoys[1].envoy)
	listeners := stat(t, envoys[0].envoy, "listener_manager.listener_modified") + stat(t, envoys[1].envoy, "listener_manager.listener_modified")
	writeManifest(t, dir, "added.yaml", hostIngressYAML("added", added, "tea", ""))
	for _, e := range envoys {
		framework.Eventually(t, convergeTimeout, e.name+": the new host served", func() error {
			return e.envoy.Expect(added, "/", http.StatusOK, "tea")
		})
	}
	after := scopeUpdates(t, envoys[0].envoy, envoys[1].envoy)
	scope := envoy.RouteScope(added, scopes)
	for e := range after {
		for s := range after[e] {
			want := before[e][s]
			if s == scope {
				want++
			}
			if after[e][s] != want {
				t.Errorf("%s, scope %d (the new host's is %d): %d route updates, then %d; want %d", envoys[e].name, s, scope, before[e][s], after[e][s], want)
			}
		}
	}
	if got := stat(t, envoys[0].envoy, "listener_manager.listener_modified") + stat(t, envoys[1].envoy, "listener_manager.listener_modified"); got != listeners {
		t.Errorf("listener_modified went from %d to %d: a new host must not rebuild the listener", listeners, got)
	}

	// A catch-all is in every scope, and serves whatever Host no rule
	// names, in whichever scope it falls.
	before = after
	writeManifest(t, dir, "default.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: fallback, namespace: default}
spec:
  ingressClassName: ingress-xds
  defaultBackend: {service: {name: tea, port: {name: http}}}
`)
	for _, e := range envoys {
		// Every scope's route configuration is a resource of its own,
		// and may come in an answer of its own: wait for them all.
		framework.Eventually(t, convergeTimeout, e.name+": the catch-all served in every scope", func() error {
			for i := range 4 * scopes {
				unknown := fmt.Sprintf("nobody-%d.example.net", i)
				if err := e.envoy.Expect(unknown, "/", http.StatusOK, "tea"); err != nil {
					return fmt.Errorf("Host %s (scope %d): %w", unknown, envoy.RouteScope(unknown, scopes), err)
				}
			}
			return e.envoy.Expect("unknown.example.com", "/coffee", http.StatusOK, "tea")
		})
		// Exact hosts are still theirs.
		if err := e.envoy.Expect(scopedHost(0), "/", http.StatusOK, scopedBackend(0)); err != nil {
			t.Errorf("%s: %v", e.name, err)
		}
	}
	after = scopeUpdates(t, envoys[0].envoy, envoys[1].envoy)
	for e := range after {
		for s := range after[e] {
			if after[e][s] != before[e][s]+1 {
				t.Errorf("%s, scope %d: %d route updates, then %d; want one more for the catch-all", envoys[e].name, s, before[e][s], after[e][s])
			}
		}
	}
}

// scopedHost is the i-th host of scopedHostsYAML, and scopedBackend the
// Service it routes to.
func scopedHost(i int) string { return fmt.Sprintf("h%d.scopes.example.com", i) }

func scopedBackend(i int) string {
	if i%2 == 0 {
		return "coffee"
	}
	return "tea"
}

// scopedHostsYAML is n Ingresses, one a host, the first with a server
// alias.
func scopedHostsYAML(n int) string {
	docs := make([]string, n)
	for i := range n {
		alias := ""
		if i == 0 {
			alias = "alias.example.com"
		}
		docs[i] = hostIngressYAML(fmt.Sprintf("h%d", i), scopedHost(i), scopedBackend(i), alias)
	}
	return strings.Join(docs, "---\n")
}

// hostIngressYAML is an Ingress of one host, all of whose paths go to
// service (coffee or tea, the cafe's Services), with a server alias unless
// alias is empty.
func hostIngressYAML(name, host, service, alias string) string {
	port := "number: 80"
	if service == "tea" {
		port = "name: http"
	}
	annotations := ""
	if alias != "" {
		annotations = fmt.Sprintf("\n  annotations: {nginx.ingress.kubernetes.io/server-alias: %q}", alias)
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: default%s
spec:
  ingressClassName: ingress-xds
  rules:
  - host: %s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: %s, port: {%s}}}}
`, name, annotations, host, service, port)
}

// scopeUpdatesRE matches each scope's count of accepted route updates.
var scopeUpdatesRE = regexp.MustCompile(`^http\.ingress_http\.rds\.ingress_http/([0-9]+)\.update_success$`)

// scopeUpdates is, for each Envoy, each scope's count of accepted route
// configuration updates, by scope.
func scopeUpdates(t *testing.T, envoys ...*framework.Envoy) [][]int64 {
	t.Helper()
	out := make([][]int64, len(envoys))
	for i, e := range envoys {
		stats, err := e.Stats(scopeUpdatesRE.String())
		if err != nil {
			t.Fatalf("reading envoy's scope stats: %v", err)
		}
		for name, v := range stats {
			s, _ := strconv.Atoi(scopeUpdatesRE.FindStringSubmatch(name)[1])
			for len(out[i]) <= s {
				out[i] = append(out[i], -1)
			}
			out[i][s] = v
		}
		for s, v := range out[i] {
			if v < 0 {
				t.Fatalf("envoy has no route update counter for scope %d", s)
			}
		}
	}
	return out
}

// echoWithHeader sends GET / with a Host and one more header, and returns
// the echo backend's reply.
func echoWithHeader(address, host, name, value string) (echo.Reply, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+"/", nil)
	if err != nil {
		return echo.Reply{}, err
	}
	req.Host = host
	req.Header.Set(name, value)
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return echo.Reply{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return echo.Reply{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	var reply echo.Reply
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
		return echo.Reply{}, errors.Join(errors.New("not an echo backend's reply"), err)
	}
	return reply, nil
}

// BenchmarkRouteScopes is the cost per request of route scopes at the data
// plane: the same GET to the same backend through three Envoys of one
// machine, one fed by a control plane with one route configuration, the
// others by one with 64 and one with 4,096 scopes (whose connection
// managers hash each request's Host with 12 and 24 regular expressions),
// the same 200 hosts on each; serial (one keep-alive connection, one
// request at a time: latency) and parallel (eight goroutines per CPU:
// throughput), taking turns, with each Envoy's CPU time per request
// (docs/benchmarks.md, "Route scopes" and "A scope hash for numbered
// names").
//
//	go test ./e2e -run '^$' -bench BenchmarkRouteScopes -benchtime 20000x
func BenchmarkRouteScopes(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	var ingresses []string
	for i := range 200 {
		ingresses = append(ingresses, hostIngressYAML(fmt.Sprintf("h%d", i), scopedHost(i), "alpha", ""))
	}
	writeManifest(b, dir, "ingresses.yaml", strings.Join(ingresses, "---\n"))
	envoys := map[string]*framework.Envoy{}
	cases := map[string][]string{"one-route-configuration": nil, "64-scopes": {"--route-scopes", "64"}, "4096-scopes": {"--route-scopes", "4096"}}
	for name, args := range cases {
		cp := framework.StartControlPlane(b, append([]string{"--manifests", dir}, args...)...)
		cp.WaitReady(b)
		envoys[name] = framework.StartEnvoy(b, cp)
	}
	names := []string{"one-route-configuration", "64-scopes", "4096-scopes"}
	for _, name := range names {
		framework.Eventually(b, convergeTimeout, name+" serving", func() error {
			return envoys[name].Expect(scopedHost(199), "/", http.StatusOK, "alpha")
		})
	}
	servers := map[string]*framework.Process{}
	for name, e := range envoys {
		servers[name] = e.Process
	}
	var n atomic.Int64
	benchSerialAndParallelCPU(b, names, servers, func(client *http.Client, name string) error {
		host := scopedHost(int(n.Add(1) % 200))
		_, err := benchGet(client, "http://"+envoys[name].HTTPAddress+"/", host, nil, http.StatusOK, "alpha")
		return err
	})
}

// TestAutoRouteScopes runs serve with its default, --route-scopes auto
// (issue 31), beside a SotW and a delta Envoy: with a few hosts the HTTP
// listener routes through one route configuration; once an Ingress
// change brings the hosts to envoy.AutoRouteScopesFrom, through
// envoy.AutoRouteScopes of them (a new listener in each Envoy), and back
// to one configuration once they fall below half the line. Every host is
// served after each switch, and a client requesting all along, over one
// kept-alive connection and over new ones, gets no failed request.
func TestAutoRouteScopes(t *testing.T) {
	framework.Heavy(t)
	if framework.RouteScopes() > 0 {
		t.Skip("the route scopes' suite fixes their number")
	}
	dir, envoys := cafeForBothProtocols(t)
	for _, e := range envoys {
		t.Cleanup(func() { assertNothingRejected(t, e.envoy) })
		framework.Eventually(t, convergeTimeout, e.name+": the cafe served", func() error {
			return e.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
		})
	}
	scoped := func(e *framework.Envoy) bool { return strings.Contains(e.ConfigDump(), "scoped_routes") }
	for _, e := range envoys {
		if scoped(e.envoy) {
			t.Fatalf("%s: route scopes with one host", e.name)
		}
	}

	// A client requesting all along, each Envoy over a kept-alive
	// connection and over new ones.
	stop := make(chan struct{})
	failed := make([][]string, len(envoys))
	var wg sync.WaitGroup
	for i, e := range envoys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := e.envoy.NewSession()
			defer session.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := session.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee"); err != nil {
					failed[i] = append(failed[i], "kept-alive: "+err.Error())
				}
				if err := e.envoy.Expect("cafe.example.com", "/tea", http.StatusOK, "tea"); err != nil {
					failed[i] = append(failed[i], "new connection: "+err.Error())
				}
			}
		}()
	}

	hosts := envoy.AutoRouteScopesFrom
	want := envoy.AutoRouteScopes(hosts)
	writeManifest(t, dir, "hosts.yaml", scopedHostsYAML(hosts))
	for _, e := range envoys {
		framework.Eventually(t, convergeTimeout, e.name+": the hosts served through scopes", func() error {
			if err := e.envoy.Expect(scopedHost(hosts-1), "/", http.StatusOK, scopedBackend(hosts-1)); err != nil {
				return err
			}
			if !scoped(e.envoy) {
				return errors.New("the listener routes through one route configuration yet")
			}
			return nil
		})
		stats, err := e.envoy.Stats(`^http\.ingress_http\.rds\.ingress_http/[0-9]+\.update_success$`)
		if err != nil || len(stats) != want {
			t.Errorf("%s: %d scopes' route configurations (%v), want %d", e.name, len(stats), err, want)
		}
		for _, i := range []int{0, hosts / 2, hosts - 1} {
			if err := e.envoy.Expect(scopedHost(i), "/menu", http.StatusOK, scopedBackend(i)); err != nil {
				t.Errorf("%s: %v", e.name, err)
			}
		}
	}

	// Fewer than half the line: one route configuration again.
	writeManifest(t, dir, "hosts.yaml", scopedHostsYAML(hosts/2-10))
	for _, e := range envoys {
		framework.Eventually(t, convergeTimeout, e.name+": one route configuration again", func() error {
			if scoped(e.envoy) {
				return errors.New("the listener routes through scopes yet")
			}
			if err := e.envoy.Expect(scopedHost(hosts-1), "/", http.StatusNotFound, ""); err != nil {
				return err
			}
			return e.envoy.Expect(scopedHost(hosts/2-11), "/", http.StatusOK, scopedBackend(hosts/2-11))
		})
	}
	close(stop)
	wg.Wait()
	for i, e := range envoys {
		if len(failed[i]) > 0 {
			t.Errorf("%s: %d failed requests while the scopes changed, the first: %s", e.name, len(failed[i]), failed[i][0])
		}
	}
}

// protocolEnvoy is an Envoy and the name of the xDS protocol it speaks.
type protocolEnvoy struct {
	name  string
	envoy *framework.Envoy
}

// cafeForBothProtocols serves the cafe from manifests in a new directory,
// which it returns, to a SotW and a delta Envoy of one control plane.
func cafeForBothProtocols(t *testing.T) (string, []protocolEnvoy) {
	t.Helper()
	b := echoBackends(t, "coffee", "tea")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", servicesYAML(b[0], b[1]))
	writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "coffee"))
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	return dir, sotwAndDelta(t, cp)
}

// sotwAndDelta starts a SotW and a delta Envoy fed by cp.
func sotwAndDelta(t *testing.T, cp *framework.ControlPlane) []protocolEnvoy {
	t.Helper()
	return []protocolEnvoy{
		{"sotw", framework.StartEnvoyWith(t, cp, framework.EnvoyOptions{SotW: true})},
		{"delta", framework.StartEnvoyWith(t, cp, framework.EnvoyOptions{Delta: true})},
	}
}

package e2e

import (
	"context"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestSoak runs what operators meet, all at once, for a while: two
// control-plane replicas with leader election against a real API server,
// two real Envoys (one SotW, one delta, each on its replica), steady
// traffic over HTTP and HTTPS to routes that exist throughout (plain,
// rewritten, rate-limited, TLS, canary, basic authentication), churn (Ingresses created, edited, moved
// to another controller's class and back, and deleted; a Service's endpoints scaled, going unready first; the TLS
// Secret rotated; the controller ConfigMap edited), and, at moments spread
// over the run, the leader SIGKILLed and restarted, an Envoy restarted,
// and the API server restarted (issue 32).
//
// It asserts, and prints: no failed request to the routes that exist
// throughout, but to an Envoy while it restarts; each new Ingress served
// by both Envoys, p99 under a second outside the fault windows; no update
// rejected by either Envoy; the surviving replica's goroutines, live heap
// and open files not growing (the median of the run's last quarter
// against its second quarter, within the margins soakFlat states); and,
// at the end, each Ingress left served and each deleted one gone, and
// what each Envoy holds equal to what a control plane started then
// computes from the final objects.
//
// INGRESS_XDS_SOAK sets the run's length (make test: 2m; make soak
// SOAK=1h for an operator's run); docs/failure-modes.md records a long one.
func TestSoak(t *testing.T) {
	length := 2 * time.Minute
	if v, err := time.ParseDuration(os.Getenv("INGRESS_XDS_SOAK")); err == nil && v > 0 {
		length = v
	}
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("INGRESS_XDS_SOAK_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("soak of %s, seed %d (INGRESS_XDS_SOAK_SEED picks the same changes and fault moments)", length, seed)

	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(otherClass, "example.com/other"))
	netns := framework.NewNetns(t)
	startNetnsEcho(t, kc, netns, "stable", 8080)
	startNetnsEcho(t, kc, netns, "churn", 8081)
	startNetnsEcho(t, kc, netns, "canary", 8082)
	sum := sha1.Sum([]byte(soakPassword))
	create(t, kc.CoreV1().Secrets(namespace), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "basic-auth", Namespace: namespace},
		Data: map[string][]byte{"auth": []byte("soak:{SHA}" + base64.StdEncoding.EncodeToString(sum[:]) + "\n")}})
	ca := framework.NewCA(t, "soak CA")
	roots := ca.Pool()
	const secureHost = "secure.soak.example"
	tlsSecret := func() *corev1.Secret {
		pair := ca.Issue(t, secureHost, secureHost)
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secure-tls", Namespace: namespace}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: pair.CertPEM, corev1.TLSPrivateKeyKey: pair.KeyPEM}}
	}
	create(t, kc.CoreV1().Secrets(namespace), tlsSecret())
	stableIngresses := []*networkingv1.Ingress{
		ingress("plain", ptr(ourClass), "plain.soak.example", prefix("/", "stable")),
		withAnnotations(ingress("rewritten", ptr(ourClass), "rewritten.soak.example", ingressPath("/app(/|$)(.*)", networkingv1.PathTypeImplementationSpecific, "stable")),
			map[string]string{nginxKey + "use-regex": "true", nginxKey + "rewrite-target": "/$2"}),
		withAnnotations(ingress("limited", ptr(ourClass), "limited.soak.example", prefix("/", "stable")),
			map[string]string{nginxKey + "limit-rps": "1000"}),
		withTLS(ingress("secure", ptr(ourClass), secureHost, prefix("/", "stable")), secureHost, "secure-tls"),
		ingress("canary-main", ptr(ourClass), "canary.soak.example", prefix("/", "stable")),
		withAnnotations(ingress("canary-canary", ptr(ourClass), "canary.soak.example", prefix("/", "canary")),
			map[string]string{nginxKey + "canary": "true", nginxKey + "canary-weight": "50"}),
		withAnnotations(ingress("authenticated", ptr(ourClass), "auth.soak.example", prefix("/", "stable")),
			map[string]string{nginxKey + "auth-type": "basic", nginxKey + "auth-secret": "basic-auth"}),
	}
	for _, ing := range stableIngresses {
		create(t, kc.NetworkingV1().Ingresses(namespace), ing)
	}
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}})
	create(t, kc.CoreV1().ConfigMaps("ingress-nginx"), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
		Data: map[string]string{"proxy-read-timeout": "60"}})

	args := []string{"--kubeconfig", api.Kubeconfig, "--status-address", "192.0.2.1", "--configmap", "ingress-nginx/ingress-nginx-controller",
		"--leader-election-namespace", namespace, "--leader-election-id", "soak-leader",
		"--leader-election-lease-duration", "4s", "--leader-election-renew-deadline", "3s", "--leader-election-retry-period", "500ms"}
	t.Setenv("POD_NAMESPACE", namespace)
	var cps [2]*framework.ControlPlane
	for i := range cps {
		t.Setenv("POD_NAME", fmt.Sprintf("soak-%d", i))
		cps[i] = framework.StartControlPlane(t, args...)
		cps[i].WaitReady(t)
	}
	s := &soak{t: t, kc: kc, roots: roots, r: rand.New(rand.NewPCG(seed, seed>>1)), backendIP: netns.IP}
	s.envoys[0] = &soakEnvoy{name: "sotw", cp: cps[0], opts: framework.EnvoyOptions{SotW: true}}
	s.envoys[1] = &soakEnvoy{name: "delta", cp: cps[1], opts: framework.EnvoyOptions{Delta: true}}
	for _, e := range s.envoys {
		e.envoy = framework.StartEnvoyWith(t, e.cp, e.opts)
	}
	routes := []soakRoute{
		{host: "plain.soak.example", path: "/x"},
		{host: "rewritten.soak.example", path: "/app/y", wantPath: "/y"},
		{host: "limited.soak.example", path: "/"},
		{host: secureHost, path: "/s", https: true},
		{host: "canary.soak.example", path: "/c", canary: true},
		{host: "auth.soak.example", path: "/a", user: "soak"},
	}
	framework.Eventually(t, convergeTimeout, "the stable routes served by both Envoys", func() error {
		for _, e := range s.envoys {
			for _, r := range routes {
				if err := s.request(e, r); err != nil {
					return err
				}
			}
		}
		return nil
	})

	run, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.traffic(run, routes) })
	wg.Go(func() { s.sample(run, cps[:]) })
	deadline := time.Now().Add(length)
	faults := []func(){
		func() { s.killLeader(ctx, cps[:]) },
		func() { s.restartEnvoy(s.envoys[s.r.IntN(2)]) },
		func() { s.restartAPIServer(api) },
	}
	// A fault in every fifth of the run (every five minutes at most), the
	// kinds in turn from one the seed picks, between changes.
	every := min(length/5, 5*time.Minute)
	started := time.Now()
	// Each fault at a random moment of the first half of its slot.
	slot, k := every, int(seed%3)
	nextFault := slot + time.Duration(s.r.Int64N(int64(every/2)))
	for time.Now().Before(deadline) {
		if elapsed := time.Since(started); elapsed >= nextFault && elapsed < length-every/2 {
			faults[k%len(faults)]()
			k++
			slot += every
			nextFault = slot + time.Duration(s.r.Int64N(int64(every/2)))
			continue
		}
		s.churn(ctx, tlsSecret)
	}
	stop()
	wg.Wait()
	s.finish()
	s.sameAsFresh(cps[:], args)
}

// sameAsFresh checks that each Envoy holds what its replica serves (every
// resource ACKed, CSDS), and that each replica serves what a control
// plane started now computes from the final objects: resource for
// resource, over ADS under one node name. So what each Envoy ended with is
// a fresh translation of the final objects.
func (s *soak) sameAsFresh(cps []*framework.ControlPlane, args []string) {
	t := s.t
	for _, e := range s.envoys {
		framework.Eventually(t, convergeTimeout, e.name+" Envoy in sync with its replica", func() error {
			return inSync(t, e.cp, e.envoy.NodeID)
		})
	}
	t.Setenv("POD_NAME", "soak-fresh")
	fresh := framework.StartControlPlane(t, args...)
	fresh.WaitReady(t)
	snapshot := func(cp *framework.ControlPlane) (*adsclient.Snapshot, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		c, err := adsclient.Dial(ctx, cp.XDSAddress, adsclient.Options{NodeID: "soak-compare"})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		return c.WaitFor(ctx, func(s *adsclient.Snapshot) bool {
			eds := 0
			for _, cl := range s.Clusters {
				if cl.GetType() == clusterv3.Cluster_EDS {
					eds++
				}
			}
			return len(s.Listeners) > 0 && len(s.Clusters) > 0 && len(s.Routes) > 0 && len(s.Endpoints) >= eds
		})
	}
	for i, cp := range cps {
		framework.Eventually(t, convergeTimeout, fmt.Sprintf("replica %d serves what a fresh control plane computes", i), func() error {
			a, err := snapshot(cp)
			if err != nil {
				return err
			}
			b, err := snapshot(fresh)
			if err != nil {
				return err
			}
			return sameResources(a, b)
		})
	}
}

// perProcess are the resources each test control plane makes its own:
// its authorisation service, started beside it on a port of its own.
// The listeners, made for each one's ports, are left out too.
var perProcess = []string{"ingress-xds-authz"}

// sameResources says how two snapshots' route configurations, clusters
// and load assignments differ, if they do.
func sameResources(a, b *adsclient.Snapshot) error {
	for _, kind := range []struct {
		name string
		a, b map[string]proto.Message
	}{
		{"route configuration", asMessages(a.Routes), asMessages(b.Routes)},
		{"cluster", asMessages(a.Clusters), asMessages(b.Clusters)},
		{"load assignment", asMessages(a.Endpoints), asMessages(b.Endpoints)},
	} {
		for name, m := range kind.a {
			if slices.Contains(perProcess, name) {
				continue
			}
			// Compared as messages, an Any's content too: a map's
			// serialised order differs from process to process.
			if o, ok := kind.b[name]; !ok || !cmp.Equal(m, o, protocmp.Transform()) {
				return fmt.Errorf("%s %s differs from a fresh translation's (present there: %v)%s", kind.name, name, ok, routeDifference(m, o))
			}
		}
		for name := range kind.b {
			if _, ok := kind.a[name]; !ok && !slices.Contains(perProcess, name) {
				return fmt.Errorf("%s %s of a fresh translation is not served", kind.name, name)
			}
		}
	}
	return nil
}

// routeDifference names the first virtual host two route configurations
// differ by, for the failure's message.
func routeDifference(a, b proto.Message) string {
	ra, okA := a.(*routev3.RouteConfiguration)
	rb, okB := b.(*routev3.RouteConfiguration)
	if !okA || !okB {
		return ""
	}
	hosts := map[string]*routev3.VirtualHost{}
	for _, v := range rb.GetVirtualHosts() {
		hosts[v.GetName()] = v
	}
	for _, v := range ra.GetVirtualHosts() {
		o, ok := hosts[v.GetName()]
		if !ok {
			return fmt.Sprintf(": virtual host %s is not in the fresh one", v.GetName())
		}
		if !cmp.Equal(v, o, protocmp.Transform()) {
			return fmt.Sprintf(": virtual host %s differs:\n%s\nfresh:\n%s", v.GetName(), prototext.Format(v), prototext.Format(o))
		}
		delete(hosts, v.GetName())
	}
	for name := range hosts {
		return fmt.Sprintf(": the fresh one's virtual host %s is not served", name)
	}
	return ": the virtual hosts are equal, the rest differs"
}

func asMessages[M proto.Message](m map[string]M) map[string]proto.Message {
	out := make(map[string]proto.Message, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// soak is a run's state: what it sent, what it measured, and when the
// faults were (requests and changes then are reported apart).
type soak struct {
	t      *testing.T
	kc     kubernetes.Interface
	roots  *x509.CertPool
	r      *rand.Rand
	envoys [2]*soakEnvoy
	// backendIP is where the echo backends listen.
	backendIP string

	mu         sync.Mutex
	ok, failed int
	failures   []string
	duringRest int // requests to an Envoy while it restarted, failed or not
	windows    []soakWindow
	latencies  []time.Duration // Ingress created to served by both Envoys, outside fault windows
	faulted    int             // changes that overlapped a fault window
	changes    map[string]int
	live       map[string]bool // churn Ingresses: true when served (of our class)
	exists     map[string]bool // churn Ingresses: true when they exist
	samples    map[int][]soakSample
	// envoyMemory are the Envoys' allocated heaps, by process.
	envoyMemory map[int][]soakSample
	probes      int
}

type soakEnvoy struct {
	name       string
	cp         *framework.ControlPlane
	opts       framework.EnvoyOptions
	mu         sync.Mutex
	envoy      *framework.Envoy
	restarting bool
}

type soakRoute struct {
	host, path, wantPath string
	https                bool
	// canary: the stable backend or the canary answers.
	canary bool
	// user, when set, is sent with soakPassword (basic authentication).
	user string
}

// soakPassword is the basic-auth route's password, {SHA} in its Secret.
const soakPassword = "soak-password"

type soakWindow struct {
	what       string
	start, end time.Time
}

type soakSample struct {
	at                       time.Time
	goroutines, heap, openFD float64
}

// request sends one request through e and checks the stable backend
// answered it (with the path rewritten where the route rewrites).
func (s *soak) request(e *soakEnvoy, r soakRoute) error {
	e.mu.Lock()
	envoy := e.envoy
	e.mu.Unlock()
	var got framework.Response
	var err error
	switch {
	case r.https:
		got, err = framework.GetTLS(envoy.HTTPSAddress, r.host, s.roots, r.host, r.path)
	case r.user != "":
		got, err = getWithBasicAuth(envoy.HTTPAddress, r.host, r.path, r.user, soakPassword)
	default:
		got, err = framework.Get(envoy.HTTPAddress, r.host, r.path)
	}
	if err != nil {
		return fmt.Errorf("%s %s%s: %w", e.name, r.host, r.path, err)
	}
	want := r.wantPath
	if want == "" {
		want = r.path
	}
	backendOK := got.Backend == "stable" || r.canary && got.Backend == "canary"
	if got.Status != http.StatusOK || !backendOK || r.user == "" && got.Echo.Path != want {
		return fmt.Errorf("%s %s%s: %s (path %q), want 200 from stable with path %q", e.name, r.host, r.path, got, got.Echo.Path, want)
	}
	return nil
}

// getWithBasicAuth sends GET path to address for host with basic
// credentials; Backend is the echo backend's name.
func getWithBasicAuth(address, host, path, user, password string) (framework.Response, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+path, nil)
	if err != nil {
		return framework.Response{}, err
	}
	req.Host = host
	req.SetBasicAuth(user, password)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return framework.Response{}, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return framework.Response{Status: resp.StatusCode, Backend: resp.Header.Get("X-Backend")}, nil
}

// traffic sends every route to both Envoys, round after round, until ctx
// ends.
func (s *soak) traffic(ctx context.Context, routes []soakRoute) {
	for ctx.Err() == nil {
		for _, e := range s.envoys {
			for _, r := range routes {
				e.mu.Lock()
				restarting := e.restarting
				e.mu.Unlock()
				err := s.request(e, r)
				e.mu.Lock()
				restarting = restarting || e.restarting
				e.mu.Unlock()
				s.mu.Lock()
				switch {
				case restarting:
					s.duringRest++
				case err != nil:
					s.failed++
					if len(s.failures) < 20 {
						s.failures = append(s.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
					}
				default:
					s.ok++
				}
				s.mu.Unlock()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sample reads each replica's goroutines, live heap and open files every
// second, by process.
func (s *soak) sample(ctx context.Context, cps []*framework.ControlPlane) {
	for ctx.Err() == nil {
		for _, cp := range cps {
			if cp.Exited() != nil {
				continue
			}
			m, err := scrapeFamilies(cp.MetricsAddress)
			if err != nil {
				continue
			}
			value := func(name string) float64 {
				if f := m[name]; f != nil && len(f.Metric) > 0 {
					if g := f.Metric[0].GetGauge(); g != nil {
						return g.GetValue()
					}
				}
				return -1
			}
			s.mu.Lock()
			if s.samples == nil {
				s.samples = map[int][]soakSample{}
			}
			s.samples[cp.Pid()] = append(s.samples[cp.Pid()], soakSample{at: time.Now(),
				goroutines: value("go_goroutines"), heap: value("go_memstats_heap_inuse_bytes"), openFD: value("process_open_fds")})
			s.mu.Unlock()
		}
		// Each Envoy's heap, by process (a restarted one is another).
		for _, e := range s.envoys {
			e.mu.Lock()
			envoy, restarting := e.envoy, e.restarting
			e.mu.Unlock()
			if restarting {
				continue
			}
			if v, err := envoy.Stat("server.memory_allocated"); err == nil {
				s.mu.Lock()
				if s.envoyMemory == nil {
					s.envoyMemory = map[int][]soakSample{}
				}
				s.envoyMemory[envoy.Pid()] = append(s.envoyMemory[envoy.Pid()], soakSample{at: time.Now(), heap: float64(v)})
				s.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// window records a fault window, which ends once the system has
// recovered: a new Ingress is served by both Envoys (so each Envoy's
// replica is back and watching).
func (s *soak) window(what string, start time.Time) {
	s.probes++
	name := fmt.Sprintf("probe-%d", s.probes)
	ctx := s.t.Context()
	framework.Eventually(s.t, 2*convergeTimeout, "the API server takes a write after: "+what, func() error {
		_, err := s.kc.NetworkingV1().Ingresses(namespace).Create(ctx, ingress(name, ptr(ourClass), name+".soak.example", prefix("/", "churn")), metav1.CreateOptions{})
		return err
	})
	for _, e := range s.envoys {
		framework.Eventually(s.t, 2*convergeTimeout, e.name+" serves a new Ingress after: "+what, func() error {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.envoy.Expect(name+".soak.example", "/", http.StatusOK, "churn")
		})
	}
	s.mu.Lock()
	s.windows = append(s.windows, soakWindow{what: what, start: start, end: time.Now()})
	s.mu.Unlock()
	s.t.Logf("fault: %s; recovered (a new Ingress served by both Envoys) after %s", what, time.Since(start).Round(time.Millisecond))
	if err := s.kc.NetworkingV1().Ingresses(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		s.t.Errorf("deleting %s: %v", name, err)
	}
}

// killLeader SIGKILLs the replica holding the lease, and starts it again
// a second later, as a crashing pod's restart would.
func (s *soak) killLeader(ctx context.Context, cps []*framework.ControlPlane) {
	start := time.Now()
	lease, err := s.kc.CoordinationV1().Leases(namespace).Get(ctx, "soak-leader", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		s.t.Logf("no lease holder to kill: %v", err)
		return
	}
	// An identity is the pod's name and a suffix of its process.
	i := 0
	if strings.HasPrefix(*lease.Spec.HolderIdentity, "soak-1_") {
		i = 1
	}
	cps[i].Kill()
	// The other replica takes the lease once it expires: the fleet's
	// status is then written by it. Restarted sooner, the killed one
	// would renew its own lease under the same name.
	other := fmt.Sprintf("soak-%d", 1-i)
	framework.Eventually(s.t, convergeTimeout, other+" takes the lease", func() error {
		l, err := s.kc.CoordinationV1().Leases(namespace).Get(ctx, "soak-leader", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if h := l.Spec.HolderIdentity; h == nil || !strings.HasPrefix(*h, other+"_") {
			return fmt.Errorf("the lease is not %s's yet", other)
		}
		return nil
	})
	s.t.Setenv("POD_NAME", fmt.Sprintf("soak-%d", i))
	cps[i].Restart(s.t)
	framework.Eventually(s.t, convergeTimeout, "the killed replica ready again", cps[i].Ready)
	s.window(fmt.Sprintf("leader soak-%d SIGKILLed, %s leading, soak-%d restarted", i, other, i), start)
}

// restartEnvoy stops e's Envoy and starts a new one on the same ports;
// requests to it meanwhile are counted apart.
func (s *soak) restartEnvoy(e *soakEnvoy) {
	start := time.Now()
	e.mu.Lock()
	e.restarting = true
	old := e.envoy
	e.mu.Unlock()
	old.Stop()
	opts := e.opts
	opts.NoWait = true
	fresh := framework.StartEnvoyWith(s.t, e.cp, opts)
	framework.Eventually(s.t, convergeTimeout, "the new "+e.name+" Envoy ready", fresh.Ready)
	framework.Eventually(s.t, convergeTimeout, "the new "+e.name+" Envoy serving", func() error {
		return fresh.Expect("plain.soak.example", "/", http.StatusOK, "stable")
	})
	e.mu.Lock()
	e.envoy, e.restarting = fresh, false
	e.mu.Unlock()
	s.window("envoy "+e.name+" restarted", start)
}

// restartAPIServer stops the API server and starts it again on the same
// port and data: the replicas' watches break and resume.
func (s *soak) restartAPIServer(api *framework.APIServer) {
	start := time.Now()
	api.StopAPIServer(s.t)
	time.Sleep(2 * time.Second)
	api.StartAgain(s.t)
	s.window("API server restarted", start)
}

// churn makes one change: an Ingress created (and timed to both Envoys),
// edited or deleted; the churn Service's endpoints scaled; the TLS Secret
// rotated; the ConfigMap edited. A write the API server refuses while it
// restarts is skipped.
func (s *soak) churn(ctx context.Context, tlsSecret func() *corev1.Secret) {
	if s.live == nil {
		s.live, s.exists, s.changes = map[string]bool{}, map[string]bool{}, map[string]int{}
	}
	name := fmt.Sprintf("churn-%d", s.r.IntN(8))
	host := name + ".soak.example"
	var err error
	kind := ""
	switch n := s.r.IntN(10); {
	case n < 4 && !s.exists[name]:
		kind = "Ingress created"
		start := time.Now()
		if _, err = s.kc.NetworkingV1().Ingresses(namespace).Create(ctx, ingress(name, ptr(ourClass), host, prefix("/", "churn")), metav1.CreateOptions{}); err == nil {
			s.live[name], s.exists[name] = true, true
			s.timeServed(host, start)
		}
	case n < 6 && s.exists[name]:
		// Now and then moved to another controller's class, and back:
		// its routes go, and come again.
		kind = "Ingress edited"
		class := ourClass
		if s.r.IntN(4) == 0 {
			kind, class = "Ingress moved to the other class", otherClass
		}
		ing := withAnnotations(ingress(name, ptr(class), host, prefix("/", "churn"), prefix(fmt.Sprintf("/p%d", s.r.IntN(100)), "churn")),
			map[string]string{nginxKey + "proxy-read-timeout": fmt.Sprint(30 + s.r.IntN(60))})
		var cur *networkingv1.Ingress
		if cur, err = s.kc.NetworkingV1().Ingresses(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
			ing.ResourceVersion = cur.ResourceVersion
			if _, err = s.kc.NetworkingV1().Ingresses(namespace).Update(ctx, ing, metav1.UpdateOptions{}); err == nil {
				s.live[name] = class == ourClass
			}
		}
	case n < 7 && s.exists[name]:
		kind = "Ingress deleted"
		if err = s.kc.NetworkingV1().Ingresses(namespace).Delete(ctx, name, metav1.DeleteOptions{}); err == nil {
			s.live[name], s.exists[name] = false, false
		}
	case n < 9:
		// Scaled up with an address that never answers, then that
		// address unready, then gone, as a rolling update does; the
		// ready one stays.
		kind = "endpoints scaled"
		extra := fmt.Sprintf("198.51.100.%d", 1+s.r.IntN(200))
		for _, eps := range [][]discoveryv1.Endpoint{{ready(s.backendIP), notReady(extra)}, {ready(s.backendIP)}} {
			if _, err = s.kc.DiscoveryV1().EndpointSlices(namespace).Update(ctx, endpointSlice("churn-1", "churn", 8081, eps...), metav1.UpdateOptions{}); err != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	default:
		if s.r.IntN(2) == 0 {
			kind = "TLS Secret rotated"
			_, err = s.kc.CoreV1().Secrets(namespace).Update(ctx, tlsSecret(), metav1.UpdateOptions{})
		} else {
			kind = "ConfigMap edited"
			_, err = s.kc.CoreV1().ConfigMaps("ingress-nginx").Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
				Data: map[string]string{"proxy-read-timeout": fmt.Sprint(30 + s.r.IntN(60))}}, metav1.UpdateOptions{})
		}
	}
	if kind == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.changes[kind+" (refused: API server away)"]++
		time.Sleep(100 * time.Millisecond)
		return
	}
	s.changes[kind]++
	time.Sleep(time.Duration(50+s.r.IntN(100)) * time.Millisecond)
}

// timeServed waits until both Envoys serve host from the churn backend,
// and records how long that took since start, unless a fault window
// overlapped it.
func (s *soak) timeServed(host string, start time.Time) {
	for _, e := range s.envoys {
		for {
			e.mu.Lock()
			envoy := e.envoy
			e.mu.Unlock()
			if envoy.Expect(host, "/", http.StatusOK, "churn") == nil {
				break
			}
			if time.Since(start) > 30*time.Second {
				s.mu.Lock()
				s.failures = append(s.failures, fmt.Sprintf("%s not served by %s after 30s", host, e.name))
				s.failed++
				s.mu.Unlock()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	took, end := time.Since(start), time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.envoys {
		if e.restarting {
			s.faulted++
			return
		}
	}
	for _, w := range s.windows {
		if w.start.Before(end) && w.end.After(start) {
			s.faulted++
			return
		}
	}
	s.latencies = append(s.latencies, took)
}

// soakFlat are the margins by which the last quarter's median may exceed
// the second quarter's: a leak grows without bound, noise does not.
var soakFlat = map[string][2]float64{ // relative, absolute
	"goroutines":             {0.2, 20},
	"live heap":              {0.5, 32 << 20},
	"open files (fd)":        {0.2, 10},
	"Envoy's allocated heap": {0.5, 32 << 20},
}

// finish checks and prints what the run measured.
func (s *soak) finish() {
	t := s.t
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Logf("traffic: %d answered, %d failed; %d sent to an Envoy while it restarted (apart)", s.ok, s.failed, s.duringRest)
	for _, f := range s.failures {
		t.Errorf("a failed request: %s", f)
	}
	changes := slices.Sorted(func(yield func(string) bool) {
		for k := range s.changes {
			if !yield(k) {
				return
			}
		}
	})
	var parts []string
	for _, k := range changes {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.changes[k]))
	}
	t.Logf("changes: %s", strings.Join(parts, ", "))
	if n := len(s.latencies); n > 0 {
		sort.Slice(s.latencies, func(i, j int) bool { return s.latencies[i] < s.latencies[j] })
		p := func(q float64) time.Duration { return s.latencies[min(n-1, int(q*float64(n)))] }
		t.Logf("new Ingress to served by both Envoys: %d outside fault windows (%d overlapped one): p50 %s, p99 %s, max %s",
			n, s.faulted, p(0.5).Round(time.Millisecond), p(0.99).Round(time.Millisecond), s.latencies[n-1].Round(time.Millisecond))
		if p(0.99) > time.Second {
			t.Errorf("p99 of a new Ingress to served: %s, want under 1s", p(0.99))
		}
	}
	for _, e := range s.envoys {
		stats, err := e.envoy.Stats(`update_rejected$`)
		if err != nil {
			t.Errorf("%s: %v", e.name, err)
		}
		for name, v := range stats {
			if v != 0 {
				t.Errorf("envoy %s rejected configuration: %s = %d", e.name, name, v)
			}
		}
	}
	// The longest-lived replica's series, and the longest-lived Envoy's.
	longest := func(m map[int][]soakSample) []soakSample {
		var out []soakSample
		for _, ss := range m {
			if len(ss) > len(out) {
				out = ss
			}
		}
		return out
	}
	series, envoySeries := longest(s.samples), longest(s.envoyMemory)
	if n := len(envoySeries); n >= 8 {
		s.flat("Envoy's allocated heap", envoySeries, func(x soakSample) float64 { return x.heap })
	} else {
		t.Errorf("%d samples of an Envoy: too few to judge growth", n)
	}
	if n := len(series); n >= 8 {
		for name, get := range map[string]func(soakSample) float64{
			"goroutines": func(x soakSample) float64 { return x.goroutines }, "live heap": func(x soakSample) float64 { return x.heap },
			"open files (fd)": func(x soakSample) float64 { return x.openFD },
		} {
			s.flat(name, series, get)
		}
	} else {
		t.Errorf("%d samples of a replica: too few to judge growth", n)
	}
	// What is left: each live churn Ingress served, each deleted one gone.
	for name, live := range s.live {
		host := name + ".soak.example"
		for _, e := range s.envoys {
			framework.Eventually(t, convergeTimeout, fmt.Sprintf("%s on %s as the run left it", host, e.name), func() error {
				if live {
					return e.envoy.Expect(host, "/", http.StatusOK, "churn")
				}
				return e.envoy.Expect(host, "/", http.StatusNotFound, "")
			})
		}
	}
}

// flat fails the test when the median of series' last quarter exceeds
// its second quarter's by more than soakFlat's margins for name.
func (s *soak) flat(name string, series []soakSample, get func(soakSample) float64) {
	n := len(series)
	median := func(xs []soakSample) float64 {
		v := make([]float64, len(xs))
		for i, x := range xs {
			v[i] = get(x)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	second, last := median(series[n/4:n/2]), median(series[3*n/4:])
	margin := soakFlat[name]
	s.t.Logf("%s: %.0f in the run's second quarter, %.0f in its last (%d samples)", name, second, last, n)
	if last > second*(1+margin[0])+margin[1] {
		s.t.Errorf("%s grew from %.0f to %.0f: more than %.0f%% and %.0f", name, second, last, 100*margin[0], margin[1])
	}
}

func withAnnotations(ing *networkingv1.Ingress, a map[string]string) *networkingv1.Ingress {
	ing.Annotations = a
	return ing
}

func withTLS(ing *networkingv1.Ingress, host, secret string) *networkingv1.Ingress {
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{host}, SecretName: secret}}
	return ing
}

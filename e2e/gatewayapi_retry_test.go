package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIRetries sends through a real Envoy to an HTTPRoute rule
// with a retry stanza, as the conformance suite's HTTPRouteRetry
// (conformance/tests/httproute-retry.go of sigs.k8s.io/gateway-api) does:
// a status the stanza names is retried up to its attempts, one it does
// not name is not; and requests retried at once are all retried, as the
// suite's eleven parallel cases need (Envoy's own bound is three retries
// in flight to a cluster).
func TestGatewayAPIRetries(t *testing.T) {
	backends := echoBackends(t, "alpha")
	alpha := backends[0]
	flaky := startFlakyBackend(t, retriedTogether)
	fm := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(backends...) + readyServiceYAML("flaky", flaky.backend)})
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewayRetryYAML, fm.cp.HTTPPort))
	framework.Eventually(t, convergeTimeout, "the retried route served", func() error {
		return fm.envoy.Expect("anything.example.org", "/retry", http.StatusOK, "alpha")
	})
	for _, tc := range []struct {
		status int
		tries  int64
	}{{500, 4}, {503, 1}} {
		before := alpha.Requests()
		r, err := fm.envoy.Get("anything.example.org", fmt.Sprintf("/retry?status=%d", tc.status))
		if err != nil || r.Status != tc.status {
			t.Fatalf("GET ?status=%d: %v, %v", tc.status, r, err)
		}
		if n := alpha.Requests() - before; n != tc.tries {
			t.Errorf("a %d answer was tried %d times, want %d", tc.status, n, tc.tries)
		}
	}

	framework.Eventually(t, convergeTimeout, "the flaky backend's route served", func() error {
		return fm.envoy.Expect("anything.example.org", "/together?warm", http.StatusOK, "")
	})
	var wg sync.WaitGroup
	statuses := make([]int, retriedTogether)
	for i := range retriedTogether {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := fm.envoy.Get("anything.example.org", "/together?key="+strconv.Itoa(i))
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			statuses[i] = r.Status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("request %d, retried with %d others in flight: %d, want 200 from its retry", i, retriedTogether-1, s)
		}
	}
	if !flaky.metTogether() {
		t.Errorf("the %d retries were never in flight at once", retriedTogether)
	}
}

// retriedTogether is how many requests TestGatewayAPIRetries has retried
// at once: more than Envoy's default bound of three.
const retriedTogether = 8

// flakyBackend answers the first try of each request (by its query's key)
// 500, and its retry 200 once `together` retries are in flight at once (or
// after a bound, so that a failing test ends): a retry Envoy refuses to
// make leaves its request with the 500.
type flakyBackend struct {
	backend  *framework.Backend
	together int

	mu       sync.Mutex
	tried    map[string]bool
	retrying int
	all      chan struct{}
	met      bool
}

func startFlakyBackend(t *testing.T, together int) *flakyBackend {
	t.Helper()
	f := &flakyBackend{together: together, tried: map[string]bool{}, all: make(chan struct{})}
	f.backend = handlerBackend(t, "flaky", f.serve)
	return f
}

// handlerBackend serves handler on a loopback port for the test, as the
// backend of the name.
func handlerBackend(t *testing.T, name string, handler http.HandlerFunc) *framework.Backend {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return &framework.Backend{Name: name, Host: host, Port: p}
}

func (f *flakyBackend) serve(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		return // 200: not a retried request
	}
	f.mu.Lock()
	if !f.tried[key] {
		f.tried[key] = true
		f.mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	f.retrying++
	if f.retrying == f.together {
		f.met = true
		close(f.all)
	}
	f.mu.Unlock()
	select {
	case <-f.all:
	case <-time.After(5 * time.Second):
	}
}

func (f *flakyBackend) metTogether() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.met
}

const gatewayRetryYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retried, namespace: default}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /retry}}]
    retry: {codes: [500], attempts: 3}
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /together}}]
    retry: {codes: [500], attempts: 1}
    backendRefs: [{name: flaky, port: 80}]
`

// TestGatewayAPIRetryTimeoutAndReset: a rule with a retry stanza retries a
// try that outlives its backendRequest timeout and a try whose connection
// the backend resets, neither of them a status the stanza names, as the
// specification asks (HTTPRouteRetry's doc and its backoff field's, in
// apis/v1/httproute_types.go of sigs.k8s.io/gateway-api: "Implementations
// SHOULD retry on connection errors (disconnect, reset, timeout, TCP
// failure) if a retry stanza is configured"; the extended features
// HTTPRouteRetryBackendTimeout and HTTPRouteRetryConnectionError, which
// v1.6.3's suite has no test for).
func TestGatewayAPIRetryTimeoutAndReset(t *testing.T) {
	failing := startFirstTryFails(t)
	fm := startFileMode(t, nil, manifest{"services.yaml", readyServiceYAML("failing", failing.backend)})
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewayRetryFailuresYAML, fm.cp.HTTPPort))
	framework.Eventually(t, convergeTimeout, "the retried routes served", func() error {
		return fm.envoy.Expect("anything.example.org", "/stall", http.StatusOK, "")
	})
	for _, path := range []string{"/stall", "/reset"} {
		key := path[1:] + "-once"
		r, err := fm.envoy.Get("anything.example.org", path+"?key="+key)
		if err != nil || r.Status != http.StatusOK {
			t.Errorf("GET %s, its first try failing: %v, %v; want 200 from its retry", path, r, err)
		}
		if n := failing.tries(key); n != 2 {
			t.Errorf("GET %s: tried %d times, want 2", path, n)
		}
	}
	// Without a retry stanza the same failures reach the client: what the
	// stanza asks for is what retries them.
	for path, want := range map[string]int{"/plain-stall": http.StatusGatewayTimeout, "/plain-reset": http.StatusBadGateway} {
		key := path[1:] + "-once"
		r, err := fm.envoy.Get("anything.example.org", path+"?key="+key)
		if err != nil || r.Status != want {
			t.Errorf("GET %s, no retry stanza: %v, %v; want %d", path, r, err, want)
		}
		if n := failing.tries(key); n != 1 {
			t.Errorf("GET %s, no retry stanza: tried %d times, want 1", path, n)
		}
	}
}

// firstTryFails fails the first try of each request (by its query's key):
// on a path ending in "stall" it answers only once the try is given up on,
// on one ending in "reset" it closes the connection without an answer. A
// later try, or a request without a key, gets 200.
type firstTryFails struct {
	backend *framework.Backend
	mu      sync.Mutex
	tried   map[string]int
}

func startFirstTryFails(t *testing.T) *firstTryFails {
	t.Helper()
	f := &firstTryFails{tried: map[string]int{}}
	f.backend = handlerBackend(t, "failing", f.serve)
	return f
}

func (f *firstTryFails) serve(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if key == "" {
		return
	}
	f.mu.Lock()
	f.tried[key]++
	first := f.tried[key] == 1
	f.mu.Unlock()
	switch {
	case !first:
	case strings.HasSuffix(r.URL.Path, "stall"):
		// Envoy gives the try up at its backendRequest timeout and
		// closes the connection; the bound only ends a failing test.
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
	case strings.HasSuffix(r.URL.Path, "reset"):
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // a reset, not a clean close
			}
			_ = conn.Close()
		}
	}
}

func (f *firstTryFails) tries(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tried[key]
}

const gatewayRetryFailuresYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retried-failures, namespace: default}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: Exact, value: /stall}}]
    retry: {codes: [500], attempts: 1, backoff: 10ms}
    timeouts: {request: 20s, backendRequest: 500ms}
    backendRefs: [{name: failing, port: 80}]
  - matches: [{path: {type: Exact, value: /reset}}]
    retry: {codes: [500], attempts: 1, backoff: 10ms}
    backendRefs: [{name: failing, port: 80}]
  - matches: [{path: {type: Exact, value: /plain-stall}}]
    timeouts: {request: 20s, backendRequest: 500ms}
    backendRefs: [{name: failing, port: 80}]
  - matches: [{path: {type: Exact, value: /plain-reset}}]
    backendRefs: [{name: failing, port: 80}]
`

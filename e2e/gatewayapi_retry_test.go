package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	f.backend = &framework.Backend{Name: "flaky", Host: host, Port: p}
	return f
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

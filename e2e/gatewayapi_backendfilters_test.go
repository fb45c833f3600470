package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIBackendHeaderFilters sends through a real Envoy to an
// HTTPRoute whose backendRefs carry header modifiers, as the conformance
// suite's HTTPRouteBackendRequestHeaderModifier and
// HTTPRouteRequestHeaderModifierBackendWeights do: each backend receives
// its own ref's changes and never the other's, after the rule's (the
// ref's value of a header both set is the one sent), and a ref's response
// changes reach the client from that backend only.
func TestGatewayAPIBackendHeaderFilters(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta")
	fm := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(backends...)})
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewayBackendFiltersYAML, fm.cp.HTTPPort))
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the route served", func() error {
		return envoy.Expect("filters.example.com", "/alone", http.StatusOK, "alpha")
	})
	send := func(path string) framework.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = "filters.example.com"
		req.Header.Set("X-Header-Remove", "gone")
		req.Header.Set("X-Header-Add", "client")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		r := framework.Response{Status: resp.StatusCode, Backend: resp.Header.Get("X-Backend"), Header: resp.Header}
		if err := json.NewDecoder(resp.Body).Decode(&r.Echo); err != nil {
			t.Fatalf("GET %s: %d from %q, not echo's JSON: %v", path, r.Status, r.Backend, err)
		}
		return r
	}
	seen := map[string]int{}
	for range 40 {
		r := send("/split")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /split: %v", r)
		}
		seen[r.Backend]++
		h := r.Echo.Header
		if got := h.Get("Backend"); got != r.Backend {
			t.Errorf("%s received Backend %q, want its own ref's value", r.Backend, got)
		}
		if got := h.Get("X-Rule"); got != "rule" {
			t.Errorf("%s received X-Rule %q, want the rule's own header", r.Backend, got)
		}
		if got := r.Header.Get("X-Served-By"); (r.Backend == "alpha") != (got == "alpha") {
			t.Errorf("a response of %s carries X-Served-By %q", r.Backend, got)
		}
		switch r.Backend {
		case "alpha":
			if h.Get("X-Header-Remove") != "" || len(h.Values("X-Header-Add")) != 2 {
				t.Errorf("alpha received X-Header-Remove %q and X-Header-Add %q, want none and the client's with its ref's", h.Get("X-Header-Remove"), h.Values("X-Header-Add"))
			}
		case "beta":
			if h.Get("X-Header-Remove") != "gone" || len(h.Values("X-Header-Add")) != 1 {
				t.Errorf("beta received alpha's changes: X-Header-Remove %q, X-Header-Add %q", h.Get("X-Header-Remove"), h.Values("X-Header-Add"))
			}
		}
	}
	if seen["alpha"] == 0 || seen["beta"] == 0 {
		t.Errorf("the split reached %v, want both backends", seen)
	}
	if r := send("/alone"); r.Backend != "alpha" || r.Echo.Header.Get("Backend") != "alpha" {
		t.Errorf("a lone ref's change: %s received Backend %q", r.Backend, r.Echo.Header.Get("Backend"))
	}
}

const gatewayBackendFiltersYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: per-backend, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [filters.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /split}}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Rule, value: rule}, {name: Backend, value: rule}]}
    backendRefs:
    - name: alpha
      port: 80
      weight: 10
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier:
          set: [{name: Backend, value: alpha}]
          add: [{name: X-Header-Add, value: alpha}]
          remove: [X-Header-Remove]
      - type: ResponseHeaderModifier
        responseHeaderModifier: {set: [{name: X-Served-By, value: alpha}]}
    - name: beta
      port: 80
      weight: 10
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: Backend, value: beta}]}
  - matches: [{path: {type: PathPrefix, value: /alone}}]
    backendRefs:
    - name: alpha
      port: 80
      filters:
      - type: RequestHeaderModifier
        requestHeaderModifier: {set: [{name: Backend, value: alpha}]}
`

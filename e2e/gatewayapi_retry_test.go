package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIRetries sends through a real Envoy to an HTTPRoute rule
// with a retry stanza, as the conformance suite's HTTPRouteRetry
// (conformance/tests/httproute-retry.go of sigs.k8s.io/gateway-api) does:
// a status the stanza names is retried up to its attempts, one it does
// not name is not.
func TestGatewayAPIRetries(t *testing.T) {
	backends := echoBackends(t, "alpha")
	alpha := backends[0]
	fm := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(backends...)})
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
}

const gatewayRetryYAML = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ingress-xds}
spec: {controllerName: ingress-xds.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: %d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retried, namespace: default}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /retry}}]
    retry: {codes: [500], attempts: 3}
    backendRefs: [{name: alpha, port: 80}]
`

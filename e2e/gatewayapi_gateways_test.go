package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIGatewaysShareAPort: two Gateways on Envoy's one HTTP port.
// Gateway wild's *.example.com listener is the most specific for
// abc.example.com, but Gateway plain's Route that names abc.example.com
// outright is served beside wild's Route, as the specification, which
// chooses a listener within one Gateway, would have it on addresses of
// their own; plain's catch-all Route is not served for the host, which
// wild's listener keeps (golden case translate/gatewayapi/testdata/gateways).
func TestGatewayAPIGatewaysShareAPort(t *testing.T) {
	fm := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha", "beta", "gamma")...)})
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewaysSharingYAML, fm.cp.HTTPPort, fm.cp.HTTPPort))
	framework.Eventually(t, convergeTimeout, "the Routes served", func() error {
		return fm.envoy.Expect("abc.example.com", "/named", http.StatusOK, "beta")
	})
	expectAll(t, fm.envoy, []framework.RouteCase{
		{Host: "abc.example.com", Path: "/wild", Status: http.StatusOK, Backend: "alpha"},
		{Host: "abc.example.com", Path: "/named", Status: http.StatusOK, Backend: "beta"},
		{Host: "abc.example.com", Path: "/any", Status: http.StatusNotFound},
		{Host: "other.org", Path: "/any", Status: http.StatusOK, Backend: "gamma"},
		{Host: "other.org", Path: "/named", Status: http.StatusNotFound},
	})
}

// gatewaysSharingYAML takes Envoy's HTTP port twice.
const gatewaysSharingYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: wild, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: %d, protocol: HTTP, hostname: "*.example.com"}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: plain, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: %d, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wild, namespace: default}
spec:
  parentRefs: [{name: wild}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /wild}}]
    backendRefs: [{name: alpha, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: named, namespace: default}
spec:
  parentRefs: [{name: plain}]
  hostnames: [abc.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /named}}]
    backendRefs: [{name: beta, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: any, namespace: default}
spec:
  parentRefs: [{name: plain}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /any}}]
    backendRefs: [{name: gamma, port: 80}]
`

package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIMisdirectedRequests: HTTPS listeners on one port each
// take only their own hosts. The listener a connection belongs to is
// chosen by its SNI, the one a request belongs to by its Host, each the
// most specific listener hostname that matches, else the listener without
// one; where the two differ, 421. The cases are the conformance suite's
// HTTPRouteHTTPSListenerDetectMisdirectedRequests, one for one
// (conformance/tests/httproute-https-listener-detect-misdirected-requests.go
// of sigs.k8s.io/gateway-api, on its base manifests' Gateway
// same-namespace-with-https-listener).
func TestGatewayAPIMisdirectedRequests(t *testing.T) {
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "misdirected", "example.org", "second-example.org", "*.wildcard.org")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "v1", "v2", "v3")...)},
		manifest{"secrets.yaml", tlsSecretYAML("tls-checks", cert.CertPEM, cert.KeyPEM)})
	https := fm.envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, fm.envoy, "listener_manager.lds", "cluster_manager.cds")
	})
	p := fm.cp.HTTPSPort
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewayMisdirectedYAML, p, p, p, p))
	framework.Eventually(t, convergeTimeout, "the Routes served", func() error {
		for _, host := range []string{"example.org", "second-example.org", "third-example.wildcard.org", "fourth-example.wildcard.org"} {
			if r, err := framework.GetTLSUnverified(https, host, host, "/detect-misdirected-requests"); err != nil || r.Status != http.StatusOK {
				return fmt.Errorf("%s: %v, %v", host, r, err)
			}
		}
		return nil
	})
	for _, tc := range []struct {
		sni, host string
		status    int
		backend   string
	}{
		{"example.org", "example.org", 200, "v1"},
		{"example.org", "second-example.org", 421, ""},
		{"example.org", "unknown-example.org", 404, ""},
		{"second-example.org", "second-example.org", 200, "v2"},
		{"second-example.org", "example.org", 421, ""},
		{"second-example.org", "unknown-example.org", 421, ""},
		{"third-example.wildcard.org", "third-example.wildcard.org", 200, "v3"},
		{"third-example.wildcard.org", "fith-example.wildcard.org", 200, "v3"},
		{"third-example.wildcard.org", "fourth-example.wildcard.org", 421, ""},
		{"third-example.wildcard.org", "second-example.org", 421, ""},
		{"third-example.wildcard.org", "unknown-example.org", 421, ""},
		{"fourth-example.wildcard.org", "fourth-example.wildcard.org", 200, "v1"},
		{"fourth-example.wildcard.org", "fith-example.wildcard.org", 421, ""},
		{"unknown-example.org", "example.org", 200, "v1"},
		{"unknown-example.org", "unknown-example.org", 404, ""},
	} {
		r, err := framework.GetTLSUnverified(https, tc.sni, tc.host, "/detect-misdirected-requests")
		if err != nil || r.Status != tc.status || tc.backend != "" && r.Backend != tc.backend {
			t.Errorf("SNI %s, Host %s: %v, %v; want %d %s", tc.sni, tc.host, r, err, tc.status, tc.backend)
		}
	}
}

// gatewayMisdirectedYAML is the conformance suite's Gateway and Routes;
// it takes Envoy's HTTPS port four times.
const gatewayMisdirectedYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - {name: https, port: %d, protocol: HTTPS, tls: {certificateRefs: [{name: tls-checks}]}}
  - {name: https-with-hostname, port: %d, protocol: HTTPS, hostname: second-example.org, tls: {certificateRefs: [{name: tls-checks}]}}
  - {name: https-with-wildcard-hostname, port: %d, protocol: HTTPS, hostname: "*.wildcard.org", tls: {certificateRefs: [{name: tls-checks}]}}
  - {name: https-with-hostname-matching-wildcard, port: %d, protocol: HTTPS, hostname: fourth-example.wildcard.org, tls: {certificateRefs: [{name: tls-checks}]}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-1, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  hostnames: [example.org]
  rules:
  - matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}]
    backendRefs: [{name: v1, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-2, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https-with-hostname}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}]
    backendRefs: [{name: v2, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-3, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https-with-wildcard-hostname}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}]
    backendRefs: [{name: v3, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: test-4, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https-with-hostname-matching-wildcard}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /detect-misdirected-requests}}]
    backendRefs: [{name: v1, port: 80}]
`

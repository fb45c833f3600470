package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIListeners checks through a real Envoy how a Gateway's
// listeners share Envoy's two ports: the HTTPS listener's Routes are served
// over TLS only, with its certificate, while plain HTTP for the same name
// is the HTTP listener's; a wildcard listener's Route covers names of any
// depth, over its wildcard certificate's chain. Certificates come from a
// CA made for the test, which clients verify them against.
func TestGatewayAPIListeners(t *testing.T) {
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	roots := ca.Pool()
	secure := ca.Issue(t, "secure", "secure.example.com")
	apps := ca.Issue(t, "apps", "*.apps.example.com")
	fallback := ca.Issue(t, "fallback", "fallback.example.com")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha", "beta", "gamma", "delta")...)},
		manifest{"secrets.yaml", tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM) + tlsSecretYAML("apps-cert", apps.CertPEM, apps.KeyPEM) +
			tlsSecretYAML("fallback-cert", fallback.CertPEM, fallback.KeyPEM)})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", httpRoutes,
			"http.ingress_https.rds.https/secure.example.com", "sds.default/secure-cert", "sds.default/apps-cert")
	})
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayListenersYAML, cp.HTTPPort, cp.HTTPSPort, cp.HTTPSPort, cp.HTTPSPort))
	framework.Eventually(t, convergeTimeout, "the HTTPS listener's Route served", func() error {
		return framework.ExpectTLS(https, "secure.example.com", roots, "secure.example.com", "/", http.StatusOK, "beta")
	})

	t.Run("each protocol's listener serves its own Routes", func(t *testing.T) {
		r, err := framework.GetTLS(https, "secure.example.com", roots, "secure.example.com", "/x")
		if err != nil || r.Status != http.StatusOK || r.Backend != "beta" {
			t.Errorf("HTTPS secure.example.com: %v, %v; want 200 from beta", r, err)
		} else if err := sameCertificate(r.Certificate, secure); err != nil {
			t.Error(err)
		}
		// Plain HTTP for the same name is the HTTP listener's: its
		// Route without hostnames, never the HTTPS listener's Route.
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "secure.example.com", Path: "/x", Status: http.StatusOK, Backend: "alpha"},
			{Host: "a.apps.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "anything.example.org", Path: "/", Status: http.StatusOK, Backend: "alpha"},
		})
	})

	t.Run("a wildcard listener covers any depth", func(t *testing.T) {
		for _, host := range []string{"a.apps.example.com", "a.b.apps.example.com"} {
			// The certificate verifies for one label (Go's rule); the
			// routes take any depth behind it.
			if err := framework.ExpectTLS(https, "x.apps.example.com", roots, host, "/", http.StatusOK, "gamma"); err != nil {
				t.Errorf("HTTPS for %s on the wildcard's chain: %v", host, err)
			}
			// And the chain is chosen by an SNI of any depth.
			r, err := framework.GetTLSUnverified(https, host, host, "/")
			if err != nil || r.Status != http.StatusOK || r.Backend != "gamma" {
				t.Errorf("HTTPS with SNI %s: %v, %v; want 200 from gamma", host, r, err)
			} else if err := sameCertificate(r.Certificate, apps); err != nil {
				t.Errorf("HTTPS with SNI %s: %v", host, err)
			}
		}
		// The wildcard's Route is not served for a name it does not cover,
		// on its chain: that name is the listener without a hostname's,
		// so the request is misdirected (TestGatewayAPIMisdirectedRequests).
		if err := framework.ExpectTLS(https, "x.apps.example.com", roots, "apps.example.com", "/", http.StatusMisdirectedRequest, ""); err != nil {
			t.Errorf("HTTPS for apps.example.com on the wildcard's chain: %v", err)
		}
	})

	// As the conformance suite's HTTPRouteHTTPSListener checks
	// (conformance/tests/httproute-https-listener.go of
	// sigs.k8s.io/gateway-api): a name no listener's hostname matches is
	// the HTTPS listener without a hostname's, with its certificate, and
	// 404 where none of its Routes serves the request.
	t.Run("the HTTPS listener without a hostname takes every other name", func(t *testing.T) {
		for _, sni := range []string{"unknown.example.org", ""} {
			r, err := framework.GetTLSUnverified(https, sni, "unknown.example.org", "/fallback/x")
			if err != nil || r.Status != http.StatusOK || r.Backend != "delta" {
				t.Errorf("HTTPS with SNI %q: %v, %v; want 200 from delta", sni, r, err)
				continue
			} else if err := sameCertificate(r.Certificate, fallback); err != nil {
				t.Errorf("HTTPS with SNI %q: %v", sni, err)
			}
			if r, err := framework.GetTLSUnverified(https, sni, "unknown.example.org", "/"); err != nil || r.Status != http.StatusNotFound {
				t.Errorf("HTTPS with SNI %q to a path no Route serves: %v, %v; want 404", sni, r, err)
			}
			// A name with a chain of its own is not served on this one.
			if r, err := framework.GetTLSUnverified(https, sni, "secure.example.com", "/"); err != nil || r.Status != http.StatusMisdirectedRequest {
				t.Errorf("HTTPS with SNI %q for secure.example.com: %v, %v; want 421", sni, r, err)
			}
		}
	})
}

// gatewayListenersYAML takes Envoy's HTTP port and its HTTPS port twice.
const gatewayListenersYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - {name: http, port: %d, protocol: HTTP}
  - name: secure
    port: %d
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [{name: secure-cert}]}
  - name: apps
    port: %d
    protocol: HTTPS
    hostname: "*.apps.example.com"
    tls: {certificateRefs: [{name: apps-cert}]}
  - name: fallback
    port: %d
    protocol: HTTPS
    tls: {certificateRefs: [{name: fallback-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: fallback, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: fallback}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /fallback}}]
    backendRefs: [{name: delta, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: plain, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  rules: [{backendRefs: [{name: alpha, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: secure}]
  rules: [{backendRefs: [{name: beta, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: apps, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: apps}]
  rules: [{backendRefs: [{name: gamma, port: 80}]}]
`

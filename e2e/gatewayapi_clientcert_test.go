package e2e

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIClientCertificates checks a Gateway's client-certificate
// validation (spec.tls.frontend) through a real Envoy, as the
// conformance suite's tests do (tests/gateway-with-clientcertificate-validation.go,
// tests/gateway-with-clientcertificate-validation-insecure-fallback.go and
// tests/gateway-invalid-default-frontend-client-certificate-validation.go
// of sigs.k8s.io/gateway-api/conformance): AllowValidOnly fails the
// handshake of a client without a certificate of the CA, AllowInsecureFallback
// takes any or none, plain HTTP is left alone, and a listener whose CA
// does not resolve is not served at all.
func TestGatewayAPIClientCertificates(t *testing.T) {
	ca := framework.NewCA(t, "gateway CA")
	roots := ca.Pool()
	strict := ca.Issue(t, "strict", "strict.example.com")
	fallback := ca.Issue(t, "fallback", "fallback.example.com")
	broken := ca.Issue(t, "broken", "broken.example.com")
	clients, others := newClientCA(t, "clients"), newClientCA(t, "someone else")
	good, stranger := clients.issue(t, "good client"), others.issue(t, "stranger")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha", "beta", "gamma")...)},
		manifest{"secrets.yaml", tlsSecretYAML("strict-cert", strict.CertPEM, strict.KeyPEM) +
			tlsSecretYAML("fallback-cert", fallback.CertPEM, fallback.KeyPEM) + tlsSecretYAML("broken-cert", broken.CertPEM, broken.KeyPEM) +
			caConfigMapYAML("clients-ca", clients.certPEM)})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds")
	})
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayClientCertYAML, cp.HTTPPort, cp.HTTPSPort, cp.HTTPSPort, cp.HTTPSPort))
	framework.Eventually(t, convergeTimeout, "the strict listener served to a client of its CA", func() error {
		r := mtlsGet(https, roots, "strict.example.com", &good, nil)
		if r.err != nil || r.Status != http.StatusOK || r.Backend != "alpha" {
			return fmt.Errorf("%+v, %v; want 200 from alpha", r.Response, r.err)
		}
		return nil
	})

	t.Run("AllowValidOnly refuses the handshake of any other client", func(t *testing.T) {
		for name, cert := range map[string]*tls.Certificate{"no certificate": nil, "another CA's certificate": &stranger} {
			r := mtlsGet(https, roots, "strict.example.com", cert, nil)
			if r.err == nil {
				t.Errorf("%s: %d from %q; want the connection refused", name, r.Status, r.Backend)
			} else if !r.asked {
				t.Errorf("%s: %v, but no certificate was asked for", name, r.err)
			}
		}
	})

	t.Run("plain HTTP is not validated", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{{Host: "strict.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"}})
	})

	t.Run("AllowInsecureFallback takes any certificate or none", func(t *testing.T) {
		for name, cert := range map[string]*tls.Certificate{"the CA's": &good, "another CA's": &stranger, "none": nil} {
			r := mtlsGet(https, roots, "fallback.example.com", cert, nil)
			if r.err != nil || r.Status != http.StatusOK || r.Backend != "beta" {
				t.Errorf("%s: %+v, %v; want 200 from beta", name, r.Response, r.err)
			} else if !r.asked {
				t.Errorf("%s: no certificate was asked for", name)
			}
		}
	})

	t.Run("a listener without a valid CA is not served", func(t *testing.T) {
		r := mtlsGet(https, roots, "broken.example.com", &good, nil)
		if r.err == nil {
			t.Errorf("broken.example.com: %d from %q; want no HTTPS service", r.Status, r.Backend)
		}
		// Its Route is still served on plain HTTP.
		expectAll(t, envoy, []framework.RouteCase{{Host: "broken.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"}})
	})

	t.Run("the CA ConfigMap created later brings the listener up", func(t *testing.T) {
		writeManifest(t, dir, "late-ca.yaml", caConfigMapYAML("late-ca", clients.certPEM))
		framework.Eventually(t, convergeTimeout, "broken.example.com served once its CA exists", func() error {
			r := mtlsGet(https, roots, "broken.example.com", &good, nil)
			if r.err != nil || r.Status != http.StatusOK || r.Backend != "gamma" {
				return fmt.Errorf("%+v, %v; want 200 from gamma", r.Response, r.err)
			}
			return nil
		})
		if r := mtlsGet(https, roots, "broken.example.com", nil, nil); r.err == nil {
			t.Errorf("broken.example.com without a certificate: %d; want the connection refused", r.Status)
		}
	})
}

// caConfigMapYAML is a ConfigMap of the default namespace with caPEM as
// ca.crt, as Gateway API's caCertificateRefs name one.
func caConfigMapYAML(name string, caPEM []byte) string {
	return fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: default}\ndata:\n  ca.crt: |\n    %s\n",
		name, strings.ReplaceAll(strings.TrimSpace(string(caPEM)), "\n", "\n    "))
}

// gatewayClientCertYAML takes Envoy's HTTP port, then its HTTPS port
// three times: Gateway web's HTTP listener, and a Gateway of an HTTPS
// listener for each of strict, fallback and broken.example.com.
var gatewayClientCertYAML = httpGatewayYAML +
	mtlsGatewayYAML("strict", "strict-cert", "", "clients-ca") +
	mtlsGatewayYAML("fallback", "fallback-cert", "AllowInsecureFallback", "clients-ca") +
	mtlsGatewayYAML("broken", "broken-cert", "", "late-ca") + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: strict, namespace: default}
spec:
  parentRefs: [{name: strict}, {name: web}]
  hostnames: [strict.example.com]
  rules: [{backendRefs: [{name: alpha, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: fallback, namespace: default}
spec:
  parentRefs: [{name: fallback}]
  rules: [{backendRefs: [{name: beta, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken, namespace: default}
spec:
  parentRefs: [{name: broken}, {name: web}]
  hostnames: [broken.example.com]
  rules: [{backendRefs: [{name: gamma, port: 80}]}]
`

// mtlsGatewayYAML is a Gateway of the default namespace with one HTTPS
// listener (its port a %d) for name.example.com, its certificate the
// Secret cert, validating clients against ConfigMap ca in mode (the
// default when empty).
func mtlsGatewayYAML(name, cert, mode, ca string) string {
	if mode != "" {
		mode = "\n          mode: " + mode
	}
	return fmt.Sprintf(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: %[1]s, namespace: default}
spec:
  gatewayClassName: ingress-xds
  tls:
    frontend:
      default:
        validation:%[3]s
          caCertificateRefs: [{kind: ConfigMap, group: "", name: %[4]s}]
  listeners:
  - name: https
    port: %%d
    protocol: HTTPS
    hostname: %[1]s.example.com
    tls: {certificateRefs: [{name: %[2]s}]}
---`, name, cert, mode, ca)
}

package e2e

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestSSLPassthrough checks ssl-passthrough through a real Envoy fed by
// `ingress-xds serve --enable-ssl-passthrough`, as ingress-nginx's
// test/e2e/settings/ssl_passthrough.go ("should pass unknown traffic to
// default backend and handle known traffic"): the annotated host's TLS
// reaches the backend, which terminates it with its own certificate (the
// client sees it, not the Ingress's Secret's), while a host without the
// annotation on the same listener keeps terminating TLS in Envoy. Plain
// HTTP to a passed-through host goes to the backend over TLS, as
// ingress-nginx's upstream is switched to https; with a certificate on the
// host and ssl-redirect it is redirected to HTTPS first.
func TestSSLPassthrough(t *testing.T) {
	b := echoBackends(t, "alpha")
	ingressCA := framework.NewCA(t, "ingress CA")
	backendCA := framework.NewCA(t, "backend CA")
	backendPair := backendCA.Issue(t, "the backend itself", "pass.example.com", "plainpass.example.com")
	secure := startTLSEcho(t, "secure", backendPair, backendCA)
	// The Ingress's own Secret for the passed-through host: never served.
	decoy := ingressCA.Issue(t, "decoy", "pass.example.com")
	terminated := ingressCA.Issue(t, "terminated", "terminated.example.com")

	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(b[0])+portService("secure", secure.Port))
	writeManifest(t, dir, "secrets.yaml", tlsSecretYAML("decoy-cert", decoy.CertPEM, decoy.KeyPEM)+
		tlsSecretYAML("terminated-cert", terminated.CertPEM, terminated.KeyPEM))
	writeManifest(t, dir, "ingresses.yaml", passthroughIngressesYAML)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--enable-ssl-passthrough")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the passed-through host served", func() error {
		return framework.ExpectTLS(https, "pass.example.com", backendCA.Pool(), "pass.example.com", "/", http.StatusOK, "secure")
	})

	t.Run("the backend's own TLS reaches the client", func(t *testing.T) {
		expectPassedThrough(t, https, backendCA.Pool(), backendPair)
	})
	t.Run("a host without the annotation still terminates in Envoy", func(t *testing.T) {
		r, err := framework.GetTLS(https, "terminated.example.com", ingressCA.Pool(), "terminated.example.com", "/")
		if err != nil {
			t.Fatal(err)
		}
		if err := sameCertificate(r.Certificate, terminated); err != nil {
			t.Error(err)
		}
		if r.Status != http.StatusOK || r.Backend != "alpha" {
			t.Errorf("got %s, want 200 from alpha", r)
		}
	})
	t.Run("plain HTTP", func(t *testing.T) {
		// With a certificate on the host and ssl-redirect: its 308.
		r, err := envoy.Get("pass.example.com", "/x")
		if err != nil || r.Status != http.StatusPermanentRedirect || r.Header.Get("Location") != "https://pass.example.com/x" {
			t.Errorf("pass.example.com: got %v, %v (Location %q); want 308 to https://pass.example.com/x", r, err, r.Header.Get("Location"))
		}
		// Without one: to the backend, over TLS.
		served := secure.requests()
		if err := envoy.Expect("plainpass.example.com", "/", http.StatusOK, "secure"); err != nil {
			t.Error(err)
		}
		if secure.requests() == served {
			t.Error("the TLS backend saw no request")
		}
	})
	t.Run("an SNI no host has gets no certificate", func(t *testing.T) {
		if _, err := framework.GetTLSUnverified(https, "unknown.example.com", "unknown.example.com", "/"); err == nil {
			t.Error(fmt.Errorf("a handshake for an unknown name succeeded"))
		}
	})
}

const passthroughIngressesYAML = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pass
  annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true", nginx.ingress.kubernetes.io/ssl-redirect: "true"}
spec:
  tls: [{hosts: [pass.example.com], secretName: decoy-cert}]
  rules:
  - host: pass.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: plainpass
  annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true"}
spec:
  rules:
  - host: plainpass.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: secure, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: terminated}
spec:
  tls: [{hosts: [terminated.example.com], secretName: terminated-cert}]
  rules:
  - host: terminated.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// expectPassedThrough checks that pass.example.com's TLS connections reach
// the "secure" backend as they are: the client sees the backend's own
// certificate (pair, issued by roots), and the backend sees the client's
// SNI and path.
func expectPassedThrough(t *testing.T, https string, roots *x509.CertPool, pair framework.KeyPair) {
	t.Helper()
	r, err := framework.GetTLS(https, "pass.example.com", roots, "pass.example.com", "/some/path")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCertificate(r.Certificate, pair); err != nil {
		t.Error(err)
	}
	if r.Status != http.StatusOK || r.Backend != "secure" || r.Echo.Path != "/some/path" {
		t.Errorf("got %s, want 200 from secure for /some/path", r)
	}
	if sni := r.Echo.Header.Get("X-Seen-SNI"); sni != "pass.example.com" {
		t.Errorf("the backend saw SNI %q, want the client's own", sni)
	}
}

package e2e

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIBackendTLS checks BackendTLSPolicy through a real Envoy
// and TLS backends (Go TLS servers), as the conformance suite's tests
// do (tests/backendtlspolicy.go, tests/backendtlspolicy-san.go,
// tests/backendtlspolicy-invalid-ca-certificate-ref.go of
// sigs.k8s.io/gateway-api/conformance): a backend is reached over TLS
// with the policy's hostname as SNI and its certificate verified against
// the ConfigMap's CA; a certificate that does not carry the hostname, or
// any of the subjectAltNames, or of another CA, fails the request; a
// policy without a valid CA answers its backend's requests 500; and a
// Gateway's tls.backend.clientCertificateRef is the certificate its
// Routes' clusters present (tests/gateway-tls-backend-client-certificate.go).
func TestGatewayAPIBackendTLS(t *testing.T) {
	backendCA, otherCA := framework.NewCA(t, "backend CA"), framework.NewCA(t, "another CA")
	secure := startTLSEcho(t, "secure", backendCA.Issue(t, "backend", "secure.example.com"), backendCA)
	client := backendCA.Issue(t, "the gateway's client", "gateway.example.com")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", portService("secure", secure.Port) + portService("mismatch", secure.Port) +
			portService("san", secure.Port) + portService("san-mismatch", secure.Port) + portService("other-ca", secure.Port) +
			portService("no-ca", secure.Port)},
		manifest{"cas.yaml", caConfigMapYAML("backend-ca", caPEM(backendCA)) + caConfigMapYAML("other-ca", caPEM(otherCA)) +
			tlsSecretYAML("client-cert", client.CertPEM, client.KeyPEM)})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds")
	})
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayBackendTLSYAML, cp.HTTPPort, cp.HTTPPort))
	seenBy := func(host, path string) (echo.Reply, error) {
		r := send(t, envoy, http.MethodGet, host, path, nil)
		var got echo.Reply
		if r.status != http.StatusOK || r.backend != "secure" || json.Unmarshal([]byte(r.body), &got) != nil {
			return got, fmt.Errorf("%s%s: got %s, want 200 from the TLS backend", host, path, r)
		}
		return got, nil
	}
	seen := func(path string) (string, error) {
		got, err := seenBy("app.example.com", path)
		return got.Header.Get("X-Seen-SNI"), err
	}
	framework.Eventually(t, convergeTimeout, "the TLS backend reached", func() error {
		_, err := seen("/secure")
		return err
	})

	t.Run("the policy's hostname is the SNI and the name verified", func(t *testing.T) {
		if sni, err := seen("/secure"); err != nil || sni != "secure.example.com" {
			t.Errorf("SNI %q, %v; want secure.example.com", sni, err)
		}
	})
	t.Run("subjectAltNames verify in the hostname's place", func(t *testing.T) {
		// The hostname is only the SNI: the certificate carries one of
		// the names listed.
		if sni, err := seen("/san"); err != nil || sni != "sni-only.example.com" {
			t.Errorf("SNI %q, %v; want sni-only.example.com", sni, err)
		}
	})
	// Each refused before any byte reaches the backend: Envoy answers 503
	// for a handshake that fails verification.
	for _, path := range []string{"/mismatch", "/san-mismatch", "/other-ca"} {
		t.Run("a certificate that does not verify fails "+path, func(t *testing.T) {
			before := secure.requests()
			if r := send(t, envoy, http.MethodGet, "app.example.com", path, nil); r.status == http.StatusOK || r.status < 500 {
				t.Errorf("got %s, want a 5xx answer", r)
			}
			if secure.requests() != before {
				t.Error("the backend served a request whose certificate did not verify")
			}
		})
	}
	t.Run("the Gateway's client certificate is presented to the backend", func(t *testing.T) {
		got, err := seenBy("mtls.example.com", "/secure")
		if cn := got.Header.Get("X-Seen-Client"); err != nil || cn != "the gateway's client" {
			t.Errorf("the backend saw client certificate %q, %v; want the gateway's client", cn, err)
		}
		// The other Gateway names none: its cluster presents none.
		got, err = seenBy("app.example.com", "/secure")
		if cn := got.Header.Get("X-Seen-Client"); err != nil || cn != "" {
			t.Errorf("through Gateway web the backend saw client certificate %q, %v; want none", cn, err)
		}
	})
	t.Run("a policy without a valid CA answers 500", func(t *testing.T) {
		if r := send(t, envoy, http.MethodGet, "app.example.com", "/no-ca", nil); r.status != http.StatusInternalServerError {
			t.Errorf("got %s, want 500", r)
		}
	})
}

// caPEM is a CA's certificate in PEM.
func caPEM(ca *framework.CA) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// gatewayBackendTLSYAML takes Envoy's HTTP port twice. Each path of
// app.example.com goes to the Service of its name, which the
// BackendTLSPolicy of that name targets.
var gatewayBackendTLSYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mtls, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - {name: http, port: %d, protocol: HTTP, hostname: mtls.example.com}
  tls:
    backend:
      clientCertificateRef: {name: client-cert}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mtls, namespace: default}
spec:
  parentRefs: [{name: mtls}]
  rules: [{backendRefs: [{name: secure, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [app.example.com]
  rules:` + pathRule("secure") + pathRule("mismatch") + pathRule("san") + pathRule("san-mismatch") + pathRule("other-ca") + pathRule("no-ca") +
	backendTLSPolicyYAML("secure", "backend-ca", "secure.example.com", "") +
	backendTLSPolicyYAML("mismatch", "backend-ca", "mismatch.example.com", "") +
	backendTLSPolicyYAML("san", "backend-ca", "sni-only.example.com", `
    - {type: URI, uri: "spiffe://cluster.local/ns/default/sa/nobody"}
    - {type: Hostname, hostname: secure.example.com}`) +
	backendTLSPolicyYAML("san-mismatch", "backend-ca", "secure.example.com", `
    - {type: Hostname, hostname: other.example.com}`) +
	backendTLSPolicyYAML("other-ca", "other-ca", "secure.example.com", "") +
	backendTLSPolicyYAML("no-ca", "no-such-configmap", "secure.example.com", "")

// pathRule is an HTTPRoute rule sending the exact path /name to the
// Service name's port 80.
func pathRule(name string) string {
	return fmt.Sprintf(`
  - matches: [{path: {type: Exact, value: /%[1]s}}]
    backendRefs: [{name: %[1]s, port: 80}]`, name)
}

// backendTLSPolicyYAML is a BackendTLSPolicy of the default namespace
// for the Service of its name: the CA of ConfigMap ca, hostname, and
// the subjectAltNames entries sans (YAML list items; none when empty).
func backendTLSPolicyYAML(name, ca, hostname, sans string) string {
	if sans != "" {
		sans = "\n    subjectAltNames:" + sans
	}
	return fmt.Sprintf(`
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: %[1]s, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: %[1]s}]
  validation:
    caCertificateRefs: [{group: "", kind: ConfigMap, name: %[2]s}]
    hostname: %[3]s%[4]s
`, name, ca, hostname, sans)
}

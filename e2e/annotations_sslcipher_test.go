package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// preferIngressYAML is a TLS host whose ssl-ciphers list AES-256 before
// AES-128, with ssl-prefer-server-ciphers as given.
func preferIngressYAML(name, host, prefer string) string {
	return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: %s
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/ssl-ciphers: "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256"
    nginx.ingress.kubernetes.io/ssl-prefer-server-ciphers: %q
spec:
  tls: [{hosts: [%s], secretName: prefer-cert}]
  rules: [{host: %s, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`, name, prefer, host, host)
}

// TestSSLPreferServerCiphers: ssl-prefer-server-ciphers "true" writes
// ssl_prefer_server_ciphers on in the host's server (ingress-nginx's
// internal/ingress/annotations/sslcipher/main.go, nginx.tmpl), so that a
// TLS 1.2 client gets the first suite of the host's ssl-ciphers that it
// offers, whatever its own order. Go's client prefers AES-128-GCM to
// AES-256-GCM whatever its configuration says; the host lists AES-256
// first, so the suite negotiated tells whose order won. "false" (the
// client's order) is not honoured: reported, and the host still served
// by its own order.
func TestSSLPreferServerCiphers(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cert := ca.IssueWithKey(t, rsaKey, "prefer", "server.example.com", "client.example.com")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha) + tlsSecretYAML("prefer-cert", cert.CertPEM, cert.KeyPEM)},
		manifest{"ingresses.yaml", preferIngressYAML("server-order", "server.example.com", "true") +
			preferIngressYAML("client-order", "client.example.com", "false")})
	suite := func(host string) (uint16, error) {
		cfg := &tls.Config{ServerName: host, RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384}}
		state, err := httpsGet(fm.envoy.HTTPSAddress, cfg)
		return state.CipherSuite, err
	}
	framework.Eventually(t, convergeTimeout, "the hosts' own order", func() error {
		for _, host := range []string{"server.example.com", "client.example.com"} {
			got, err := suite(host)
			if err != nil {
				return fmt.Errorf("%s: %w", host, err)
			}
			if got != tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 {
				return fmt.Errorf("%s: %s, want the host's first, ECDHE-RSA-AES256-GCM-SHA384", host, tls.CipherSuiteName(got))
			}
		}
		return nil
	})
	if out := fm.cp.Output(); !strings.Contains(out, `only \"true\" is honoured`) || !strings.Contains(out, "client-order") {
		t.Errorf("ssl-prefer-server-ciphers \"false\" not reported:\n%s", fm.cp.Tail(20))
	}
}

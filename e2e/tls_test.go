package e2e

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestTLS checks TLS termination through a real Envoy fed by `ingress-xds
// serve --manifests`: the certificate chosen by SNI and the backend behind
// it, wildcard certificates, no default certificate, hosts whose Secret is
// unusable staying on plain HTTP, certificate rotation over SDS without
// disturbing Envoy or its clients, and force-ssl-redirect. Certificates come
// from a CA made for the test, and clients verify them against it.
func TestTLS(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta", "gamma")
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	roots := ca.Pool()
	secure := ca.Issue(t, "secure v1", "secure.example.com")
	other := ca.Issue(t, "other", "other.example.com")
	wild := ca.Issue(t, "wild", "*.wild.example.com")
	redirect := ca.Issue(t, "redirect", "redirect.example.com", "legacy.example.com")
	// A certificate and a key that do not belong together.
	mismatched := ca.Issue(t, "mismatched", "badsecret.example.com")
	mismatched.KeyPEM = ca.Issue(t, "unrelated", "badsecret.example.com").KeyPEM

	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"secrets.yaml", tlsSecretYAML("other-cert", other.CertPEM, other.KeyPEM) +
			tlsSecretYAML("wild-cert", wild.CertPEM, wild.KeyPEM) +
			tlsSecretYAML("redirect-cert", redirect.CertPEM, redirect.KeyPEM) +
			tlsSecretYAML("mismatched-cert", mismatched.CertPEM, mismatched.KeyPEM) +
			tlsSecretYAML("garbage-cert", []byte("not a certificate"), []byte("not a key"))},
		// The Secret that rotates has a file of its own.
		manifest{"secure-secret.yaml", tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM)},
		manifest{"ingresses.yaml", tlsIngressesYAML})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds",
			"http.ingress_http.rds.ingress_http", "http.ingress_https.rds.https/secure.example.com",
			"sds.default/secure-cert", "sds.default/wild-cert")
	})
	framework.Eventually(t, convergeTimeout, "first HTTPS route served", func() error {
		return framework.ExpectTLS(https, "secure.example.com", roots, "secure.example.com", "/", http.StatusOK, "alpha")
	})

	t.Run("SNI selects the certificate and the backend", func(t *testing.T) {
		for _, c := range []struct {
			host    string
			cert    framework.KeyPair
			backend string
		}{
			{"secure.example.com", secure, "alpha"},
			{"other.example.com", other, "beta"},
		} {
			r, err := framework.GetTLS(https, c.host, roots, c.host, "/some/path")
			if err != nil {
				t.Errorf("HTTPS %s: %v", c.host, err)
				continue
			}
			if r.Status != http.StatusOK || r.Backend != c.backend {
				t.Errorf("HTTPS %s: got %s, want 200 from %q", c.host, r, c.backend)
			}
			if err := sameCertificate(r.Certificate, c.cert); err != nil {
				t.Errorf("HTTPS %s: %v", c.host, err)
			}
			if r.Echo.Path != "/some/path" || r.Echo.Host != c.host {
				t.Errorf("HTTPS %s: the backend saw host %q, path %q", c.host, r.Echo.Host, r.Echo.Path)
			}
		}
		// Without force-ssl-redirect, plain HTTP keeps working.
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "secure.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "other.example.com", Path: "/", Status: http.StatusOK, Backend: "beta"},
		})
		// The port and case of the Host header do not matter over HTTPS
		// either, nor the case of the server name.
		if err := framework.ExpectTLS(https, "secure.example.com", roots, "SECURE.example.com:443", "/", http.StatusOK, "alpha"); err != nil {
			t.Error(err)
		}
		if r, err := framework.GetTLS(https, "SECURE.Example.COM", roots, "secure.example.com", "/"); err != nil {
			t.Errorf("HTTPS with server name SECURE.Example.COM: %v", err)
		} else if err := sameCertificate(r.Certificate, secure); err != nil || r.Backend != "alpha" {
			t.Errorf("HTTPS with server name SECURE.Example.COM: got %s: %v", r, err)
		}
		// A certificate only fronts its own host: over secure.example.com's
		// connection, a request for other.example.com finds no route.
		if err := framework.ExpectTLS(https, "secure.example.com", roots, "other.example.com", "/", http.StatusNotFound, ""); err != nil {
			t.Error(err)
		}
	})

	t.Run("wildcard certificate", func(t *testing.T) {
		for _, host := range []string{"a.wild.example.com", "other-label.wild.example.com"} {
			r, err := framework.GetTLS(https, host, roots, host, "/")
			if err != nil {
				t.Errorf("HTTPS %s: %v", host, err)
				continue
			}
			if r.Status != http.StatusOK || r.Backend != "gamma" {
				t.Errorf("HTTPS %s: got %s, want 200 from gamma", host, r)
			}
			if err := sameCertificate(r.Certificate, wild); err != nil {
				t.Errorf("HTTPS %s: %v", host, err)
			}
		}
		// The apex is not covered by *.wild.example.com, and no rule names
		// it: no certificate for it.
		if cert, err := framework.Handshake(https, "wild.example.com"); err == nil {
			t.Errorf("TLS handshake for wild.example.com succeeded with %q, want a failure", describe(cert))
		}
		// Two labels: no client would accept *.wild.example.com for it, and
		// no backend may answer.
		if _, err := framework.GetTLS(https, "a.b.wild.example.com", roots, "a.b.wild.example.com", "/"); err == nil {
			t.Errorf("HTTPS a.b.wild.example.com: the client accepted the certificate")
		}
		noBackendOverTLS(t, https, "a.b.wild.example.com")
	})

	t.Run("no default certificate", func(t *testing.T) {
		for _, sni := range []string{"unknown.example.com", "example.com", ""} {
			if cert, err := framework.Handshake(https, sni); err == nil {
				t.Errorf("TLS handshake with SNI %q succeeded with %q, want a failure: there must be no default chain", sni, describe(cert))
			} else {
				t.Logf("TLS handshake with SNI %q failed as it should: %v", sni, err)
			}
		}
	})

	t.Run("a host whose secret is missing or invalid stays on HTTP", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "nosecret.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "badsecret.example.com", Path: "/", Status: http.StatusOK, Backend: "beta"},
			{Host: "garbage.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
		})
		for _, host := range []string{"nosecret.example.com", "badsecret.example.com", "garbage.example.com"} {
			if cert, err := framework.Handshake(https, host); err == nil {
				t.Errorf("TLS handshake for %s succeeded with %q, want a failure: its Secret is unusable", host, describe(cert))
			}
		}
		log := cp.Output()
		for _, name := range []string{"nosecret", "badsecret", "garbage"} {
			if !strings.Contains(log, "object=default/"+name+" reason=InvalidTLSSecret") {
				t.Errorf("no InvalidTLSSecret problem logged for Ingress %s", name)
			}
		}
	})

	t.Run("force-ssl-redirect", func(t *testing.T) {
		for _, host := range []string{"redirect.example.com", "legacy.example.com"} {
			for _, c := range []struct{ hostHeader, path, location string }{
				{host, "/app", "https://" + host + "/app"},
				{host, "/app/x?q=1&r=2", "https://" + host + "/app/x?q=1&r=2"},
				// Envoy strips the port from Host before routing, so the
				// redirect goes to the default HTTPS port.
				{host + ":8080", "/app", "https://" + host + "/app"},
			} {
				r, err := envoy.Get(c.hostHeader, c.path)
				if err != nil {
					t.Errorf("GET %s%s: %v", c.hostHeader, c.path, err)
					continue
				}
				if r.Status != http.StatusPermanentRedirect || r.Backend != "" || r.Header.Get("Location") != c.location {
					t.Errorf("GET %s%s: got %s with Location %q, want 308 to %q", c.hostHeader, c.path, r, r.Header.Get("Location"), c.location)
				}
			}
			// Only the Ingress's routes redirect: other paths are 404.
			if err := envoy.Expect(host, "/elsewhere", http.StatusNotFound, ""); err != nil {
				t.Error(err)
			}
			// HTTPS serves normally.
			r, err := framework.GetTLS(https, host, roots, host, "/app/x")
			if err != nil {
				t.Errorf("HTTPS %s: %v", host, err)
				continue
			}
			if r.Status != http.StatusOK || r.Backend != "alpha" {
				t.Errorf("HTTPS %s/app/x: got %s, want 200 from alpha", host, r)
			}
			if err := sameCertificate(r.Certificate, redirect); err != nil {
				t.Errorf("HTTPS %s: %v", host, err)
			}
		}
		// An annotation of another value does not redirect.
		if err := envoy.Expect("noredirect.example.com", "/app", http.StatusOK, "alpha"); err != nil {
			t.Error(err)
		}
	})

	t.Run("rotating a certificate", func(t *testing.T) {
		testRotation(t, envoy, dir, ca, secure)
	})
}

// testRotation rewrites secure.example.com's Secret and checks that new
// connections get the new certificate over SDS while Envoy keeps running,
// keeps its listeners, and keeps its clients' connections.
func testRotation(t *testing.T, envoy *framework.Envoy, dir string, ca *framework.CA, old framework.KeyPair) {
	roots := ca.Pool()
	plain := envoy.NewSession()
	defer plain.Close()
	tlsSession := framework.NewTLSSession(envoy.HTTPSAddress, "secure.example.com", roots)
	defer tlsSession.Close()
	if err := plain.Expect("secure.example.com", "/", http.StatusOK, "alpha"); err != nil {
		t.Fatal(err)
	}
	before, err := tlsSession.Get("secure.example.com", "/")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCertificate(before.Certificate, old); err != nil {
		t.Fatalf("before the rotation: %v", err)
	}
	pid := envoy.Pid()
	const sdsUpdates, listenerChanges = "sds.default/secure-cert.update_success", "listener_manager.listener_modified"
	sdsBefore, listenersBefore := stat(t, envoy, sdsUpdates), stat(t, envoy, listenerChanges)

	rotated := ca.Issue(t, "secure v2", "secure.example.com")
	writeManifest(t, dir, "secure-secret.yaml", tlsSecretYAML("secure-cert", rotated.CertPEM, rotated.KeyPEM))
	took := framework.Eventually(t, convergeTimeout, "new certificate served", func() error {
		r, err := framework.GetTLS(envoy.HTTPSAddress, "secure.example.com", roots, "secure.example.com", "/")
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK || r.Backend != "alpha" {
			return fmt.Errorf("got %s, want 200 from alpha", r)
		}
		return sameCertificate(r.Certificate, rotated)
	})
	t.Logf("measured: Secret rewrite to new certificate served in %s", took.Round(time.Millisecond))

	if err := envoy.Exited(); err != nil || envoy.Pid() != pid {
		t.Fatalf("envoy restarted or exited (pid %d, was %d): %v", envoy.Pid(), pid, err)
	}
	// Kept-alive connections opened before the rotation still work, the
	// TLS one still on the certificate it was opened with.
	if err := plain.Expect("secure.example.com", "/", http.StatusOK, "alpha"); err != nil {
		t.Errorf("kept-alive HTTP connection after the rotation: %v", err)
	}
	if r, err := tlsSession.Get("secure.example.com", "/"); err != nil {
		t.Errorf("kept-alive HTTPS connection after the rotation: %v", err)
	} else if r.Status != http.StatusOK || r.Backend != "alpha" {
		t.Errorf("kept-alive HTTPS connection after the rotation: got %s", r)
	} else if err := sameCertificate(r.Certificate, old); err != nil {
		t.Errorf("kept-alive HTTPS connection after the rotation: %v", err)
	}
	if n := plain.Dials(); n != 1 {
		t.Errorf("the HTTP client needed %d connections, want 1", n)
	}
	if n := tlsSession.Dials(); n != 1 {
		t.Errorf("the HTTPS client needed %d connections, want 1", n)
	}
	if after := stat(t, envoy, sdsUpdates); after <= sdsBefore {
		t.Errorf("%s went from %d to %d: the certificate did not arrive over SDS", sdsUpdates, sdsBefore, after)
	}
	if after := stat(t, envoy, listenerChanges); after != listenersBefore {
		t.Errorf("%s went from %d to %d: a certificate rotation must not rebuild a listener", listenerChanges, listenersBefore, after)
	}
	// The other hosts are untouched.
	if err := framework.ExpectTLS(envoy.HTTPSAddress, "other.example.com", roots, "other.example.com", "/", http.StatusOK, "beta"); err != nil {
		t.Error(err)
	}
}

// sameCertificate returns an error unless got is want's certificate.
func sameCertificate(got *x509.Certificate, want framework.KeyPair) error {
	if got == nil {
		return fmt.Errorf("no certificate served, want %q", describe(want.Cert))
	}
	if !got.Equal(want.Cert) {
		return fmt.Errorf("served %q, want %q", describe(got), describe(want.Cert))
	}
	return nil
}

func describe(c *x509.Certificate) string {
	if c == nil {
		return "no certificate"
	}
	return fmt.Sprintf("CN=%s DNS=%v serial=%s", c.Subject.CommonName, c.DNSNames, c.SerialNumber)
}

// noBackendOverTLS checks that no backend answers an HTTPS request for
// host, whatever certificate Envoy presents (the client does not verify
// it): the handshake fails, or Envoy answers itself.
func noBackendOverTLS(t *testing.T, address, host string) {
	t.Helper()
	cert, err := framework.Handshake(address, host)
	if err != nil {
		t.Logf("TLS handshake for %s failed: %v", host, err)
		return
	}
	r, err := framework.GetTLSUnverified(address, host, host, "/")
	if err != nil {
		t.Logf("HTTPS %s (certificate %q): %v", host, describe(cert), err)
		return
	}
	if r.Backend != "" || r.Status != http.StatusNotFound {
		t.Errorf("HTTPS %s (certificate %q): got %s, want 404 from envoy or no answer", host, describe(cert), r)
	} else {
		t.Logf("HTTPS %s: envoy presents %q and answers 404", host, describe(cert))
	}
}

// tlsIngressesYAML: every host names the Secret it uses; the Secrets are in
// TestTLS. nosecret's Secret does not exist.
const tlsIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: default}
spec:
  tls: [{hosts: [secure.example.com], secretName: secure-cert}]
  rules:
  - host: secure.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: other, namespace: default}
spec:
  tls: [{hosts: [other.example.com], secretName: other-cert}]
  rules:
  - host: other.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: wild, namespace: default}
spec:
  tls: [{hosts: ["*.wild.example.com"], secretName: wild-cert}]
  rules:
  - host: "*.wild.example.com"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: nosecret, namespace: default}
spec:
  tls: [{hosts: [nosecret.example.com], secretName: does-not-exist}]
  rules:
  - host: nosecret.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: badsecret, namespace: default}
spec:
  tls: [{hosts: [badsecret.example.com], secretName: mismatched-cert}]
  rules:
  - host: badsecret.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: garbage, namespace: default}
spec:
  tls: [{hosts: [garbage.example.com], secretName: garbage-cert}]
  rules:
  - host: garbage.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: redirect
  namespace: default
  annotations: {ingress-xds.io/force-ssl-redirect: "true"}
spec:
  tls: [{hosts: [redirect.example.com], secretName: redirect-cert}]
  rules:
  - host: redirect.example.com
    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: legacy-redirect
  namespace: default
  annotations: {ingress.kubernetes.io/force-ssl-redirect: "true"}
spec:
  tls: [{hosts: [legacy.example.com], secretName: redirect-cert}]
  rules:
  - host: legacy.example.com
    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: noredirect
  namespace: default
  annotations: {ingress-xds.io/force-ssl-redirect: "false"}
spec:
  rules:
  - host: noredirect.example.com
    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

package framework

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
)

// TestHTTPSHelpers runs the HTTPS helpers against a TLS server that picks
// its certificate by SNI, as Envoy does, and has no default one.
func TestHTTPSHelpers(t *testing.T) {
	ca := NewCA(t, "test CA")
	one := ca.Issue(t, "one", "one.example.com")
	wild := ca.Issue(t, "wild", "*.example.org")
	pairs := map[string]KeyPair{"one.example.com": one, "a.example.org": wild}
	srv := httptest.NewUnstartedServer(echo.Handler("tls-echo"))
	srv.TLS = &tls.Config{GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		kp, ok := pairs[hello.ServerName]
		if !ok {
			return nil, errors.New("no certificate for this name") // the handshake fails
		}
		cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
		return &cert, err
	}}
	srv.StartTLS()
	defer srv.Close()
	address := srv.Listener.Addr().String()

	r, err := GetTLS(address, "one.example.com", ca.Pool(), "one.example.com", "/x")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusOK || r.Backend != "tls-echo" || r.Echo.Path != "/x" || r.Echo.Host != "one.example.com" {
		t.Errorf("GetTLS: got %s", r)
	}
	if r.Certificate == nil || !r.Certificate.Equal(one.Cert) {
		t.Errorf("GetTLS: served certificate %v, want %v", r.Certificate, one.Cert.Subject)
	}
	if err := ExpectTLS(address, "a.example.org", ca.Pool(), "a.example.org", "/", http.StatusOK, "tls-echo"); err != nil {
		t.Errorf("ExpectTLS with a wildcard certificate: %v", err)
	}
	// Another CA's client refuses the certificate; so does a client asking
	// for a name the certificate does not cover.
	if _, err := GetTLS(address, "one.example.com", NewCA(t, "other CA").Pool(), "one.example.com", "/"); err == nil {
		t.Error("GetTLS trusted a certificate from a CA it was not given")
	}
	if cert, err := Handshake(address, "one.example.com"); err != nil || !cert.Equal(one.Cert) {
		t.Errorf("Handshake: %v, %v", cert, err)
	}
	if _, err := Handshake(address, "unknown.example.com"); err == nil {
		t.Error("Handshake succeeded where the server has no certificate")
	}
	if r, err := GetTLSUnverified(address, "a.example.org", "anything", "/"); err != nil || !r.Certificate.Equal(wild.Cert) {
		t.Errorf("GetTLSUnverified: %v, %v", r, err)
	}

	s := NewTLSSession(address, "one.example.com", ca.Pool())
	defer s.Close()
	for range 3 {
		if err := s.Expect("one.example.com", "/", http.StatusOK, "tls-echo"); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Dials(); n != 1 {
		t.Errorf("TLS session: %d connections for 3 requests, want 1", n)
	}
}

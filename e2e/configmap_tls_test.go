package e2e

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapTLSAndServer checks through a real Envoy the
// ConfigMap's keys nginx.tmpl writes as ssl_session_tickets (TLS session
// resumption by ticket, which ingress-nginx turns off by default),
// ssl_ecdh_curve, allow-backend-server-header (proxy_pass_header Server)
// and hide-headers (proxy_hide_header): a client that kept its session
// resumes it only while the keys let it, one offering only a group left
// out makes no handshake, the backend's Server header reaches the client
// only when allowed, and a hidden header never.
func TestControllerConfigMapTLSAndServer(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "backend/1.0")
		w.Header().Set("X-Powered-By", "framework/2.0")
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(backend.Close)
	// Named alpha, as forwardedIngressYAML's web.example.com routes.
	b := &framework.Backend{Name: "alpha", Host: "127.0.0.1", Port: backend.Listener.Addr().(*net.TCPAddr).Port}
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "web", "web.example.com")
	fm, configure := startConfigMapMode(t, map[string]string{"ssl-session-tickets": "false", "ssl-reject-handshake": "true"},
		manifest{"services.yaml", readyServiceYAML("alpha", b) + "---\n" + tlsSecretYAML("web-cert", cert.CertPEM, cert.KeyPEM)},
		manifest{"ingresses.yaml", forwardedIngressYAML})
	envoy := fm.envoy

	// resumes connects twice with one session cache: whether the second
	// connection resumed the first's session.
	resumes := func(version uint16) (bool, error) {
		cfg := &tls.Config{ServerName: "web.example.com", RootCAs: ca.Pool(), MinVersion: version, MaxVersion: version,
			ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		if _, err := httpsGet(envoy.HTTPSAddress, cfg); err != nil {
			return false, err
		}
		st, err := httpsGet(envoy.HTTPSAddress, cfg)
		return st.DidResume, err
	}
	expectResumption := func(what string, want bool) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, what, func() error {
			for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
				got, err := resumes(v)
				if err != nil {
					return err
				}
				if got != want {
					return fmt.Errorf("TLS %s: resumed %v, want %v", tls.VersionName(v), got, want)
				}
			}
			return nil
		})
	}
	// ingress-nginx's default: no tickets. Go's client resumes by ticket
	// alone (never by session ID), so it resumes nothing.
	expectResumption("ssl-session-tickets false: no ticket", false)
	// ssl-reject-handshake true (nginx.tmpl's ssl_reject_handshake on in
	// the default server): a handshake that names no host with a
	// certificate, or none, is refused, as ingress-xds always does.
	for _, sni := range []string{"unknown.example.com", ""} {
		if c, err := framework.Handshake(envoy.HTTPSAddress, sni); err == nil {
			t.Errorf("ssl-reject-handshake: a handshake with SNI %q made, with %q", sni, describe(c))
		}
	}
	configure(map[string]string{"ssl-session-tickets": "true"})
	expectResumption("ssl-session-tickets true: resumed", true)

	// ssl-ecdh-curve (nginx's ssl_ecdh_curve): a client offering only a
	// group left out cannot make a handshake.
	configure(map[string]string{"ssl-session-tickets": "true", "ssl-ecdh-curve": "secp384r1"})
	handshake := func(group tls.CurveID) error {
		_, err := httpsGet(envoy.HTTPSAddress, &tls.Config{ServerName: "web.example.com", RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12,
			CurvePreferences: []tls.CurveID{group}})
		return err
	}
	framework.Eventually(t, convergeTimeout, "ssl-ecdh-curve secp384r1 alone", func() error {
		if err := handshake(tls.X25519); err == nil {
			return fmt.Errorf("a client of X25519 alone made its handshake")
		}
		return handshake(tls.CurveP384)
	})

	// headers is what the client got of the backend's headers.
	headers := func() (http.Header, error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
		if err != nil {
			return nil, err
		}
		req.Host = "web.example.com"
		resp, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp.Header, nil
	}
	expect := func(name, want string) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, name+": "+want, func() error {
			h, err := headers()
			if err == nil && h.Get(name) != want {
				err = fmt.Errorf("%s %q, want %q", name, h.Get(name), want)
			}
			return err
		})
	}
	expect("Server", "envoy")
	expect("X-Powered-By", "framework/2.0")
	// allow-backend-server-header (proxy_pass_header Server) and
	// hide-headers (proxy_hide_header at http level).
	configure(map[string]string{"allow-backend-server-header": "true", "hide-headers": "X-Powered-By"})
	expect("Server", "backend/1.0")
	expect("X-Powered-By", "")
}

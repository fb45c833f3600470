package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"fmt"
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
	b := serverBackend(t, "alpha", backend)
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

// TestControllerConfigMapSessionTicketKey checks through two real Envoys,
// each fed by a replica of its own given the same ConfigMap, the
// ConfigMap's ssl-session-ticket-key, which ingress-nginx writes as
// nginx's ssl_session_ticket_key
// (internal/ingress/controller/store/store.go, writeSSLSessionTicketKey;
// test/e2e/settings/ssl_session_tickets.go): without it each Envoy makes
// keys of its own, and a session one issued does not resume on the other;
// with it every Envoy resumes the others' sessions, as the replicas of
// ingress-nginx do behind one load balancer; a new key makes the tickets
// issued before it resume nowhere.
func TestControllerConfigMapSessionTicketKey(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	t.Cleanup(backend.Close)
	b := serverBackend(t, "alpha", backend)
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "web", "web.example.com")
	// Two replicas, each with an Envoy: Envoys of one control plane share
	// its listeners' ports, and the kernel would choose between them.
	var envoys []*framework.Envoy
	var configures []func(map[string]string)
	for range 2 {
		fm, configure := startConfigMapMode(t, map[string]string{"ssl-session-tickets": "true"},
			manifest{"services.yaml", readyServiceYAML("alpha", b) + "---\n" + tlsSecretYAML("web-cert", cert.CertPEM, cert.KeyPEM)},
			manifest{"ingresses.yaml", forwardedIngressYAML})
		envoys, configures = append(envoys, fm.envoy), append(configures, configure)
	}
	configure := func(data map[string]string) {
		for _, c := range configures {
			c(data)
		}
	}
	one, other := envoys[0], envoys[1]

	config := func(version uint16, sessions tls.ClientSessionCache) *tls.Config {
		return &tls.Config{ServerName: "web.example.com", RootCAs: ca.Pool(), MinVersion: version, MaxVersion: version, ClientSessionCache: sessions}
	}
	// crosses says whether a session the first Envoy issued resumes on
	// the second.
	crosses := func(version uint16, from, to *framework.Envoy) (bool, error) {
		cfg := config(version, tls.NewLRUClientSessionCache(4))
		if _, err := httpsGet(from.HTTPSAddress, cfg); err != nil {
			return false, err
		}
		st, err := httpsGet(to.HTTPSAddress, cfg)
		return st.DidResume, err
	}
	versions := []uint16{tls.VersionTLS12, tls.VersionTLS13}
	expectCrossing := func(what string, want bool) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, what, func() error {
			for _, v := range versions {
				for _, pair := range [][2]*framework.Envoy{{one, other}, {other, one}, {one, one}} {
					got, err := crosses(v, pair[0], pair[1])
					if err != nil {
						return err
					}
					// An Envoy resumes its own sessions in any case.
					if want := want || pair[0] == pair[1]; got != want {
						return fmt.Errorf("%s: a session of %s resumed on %s: %v, want %v", tls.VersionName(v), pair[0].HTTPSAddress, pair[1].HTTPSAddress, got, want)
					}
				}
			}
			return nil
		})
	}
	expectCrossing("no ssl-session-ticket-key: keys of each Envoy's own", false)

	// A key as ingress-nginx's documentation makes it: openssl rand 80 |
	// openssl enc -A -base64.
	key80 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x5a, 0xa5, 0x3c, 0xc3, 0x0f}, 16))
	configure(map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key": key80})
	expectCrossing("ssl-session-ticket-key of 80 bytes: one key", true)

	// Sessions issued under that key, kept: a client holding them offers
	// them again whatever it is sent.
	held := map[uint16]tls.ClientSessionCache{}
	for _, v := range versions {
		cache := tls.NewLRUClientSessionCache(4)
		if _, err := httpsGet(one.HTTPSAddress, config(v, cache)); err != nil {
			t.Fatal(err)
		}
		held[v] = keptSessions{cache}
	}
	// A key of 48 bytes, nginx's other length: each replica stretches it
	// to the same 80.
	key48 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x11, 0x22, 0x33}, 16))
	configure(map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key": key48})
	framework.Eventually(t, convergeTimeout, "a new key: the sessions of the old resume nowhere", func() error {
		for _, v := range versions {
			for _, e := range envoys {
				st, err := httpsGet(e.HTTPSAddress, config(v, held[v]))
				if err != nil {
					return err
				}
				if st.DidResume {
					return fmt.Errorf("%s: %s resumed a session of the old key", tls.VersionName(v), e.HTTPSAddress)
				}
			}
		}
		return nil
	})
	expectCrossing("ssl-session-ticket-key of 48 bytes: one key again", true)

	// Tickets off: the key is not used, and nothing resumes.
	configure(map[string]string{"ssl-session-tickets": "false", "ssl-session-ticket-key": key48})
	framework.Eventually(t, convergeTimeout, "ssl-session-tickets false: no ticket, key or not", func() error {
		for _, v := range versions {
			cfg := config(v, tls.NewLRUClientSessionCache(4))
			for range 2 {
				st, err := httpsGet(one.HTTPSAddress, cfg)
				if err != nil {
					return err
				}
				if st.DidResume {
					return fmt.Errorf("%s: resumed with tickets off", tls.VersionName(v))
				}
			}
		}
		return nil
	})
}

// keptSessions is a client's session cache that takes no new session:
// the client offers the sessions it held whatever the server sends.
type keptSessions struct{ tls.ClientSessionCache }

func (keptSessions) Put(string, *tls.ClientSessionState) {}

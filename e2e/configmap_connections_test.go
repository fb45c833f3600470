package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapConnections checks, through a real Envoy, the
// controller ConfigMap's keys of how connections are treated: the HTTPS
// listener's TLS versions, ciphers and HTTP/2, the client connections'
// keep-alive, the backend connections' pool, the client's address and
// what the backend is told of it, and the access log. Each change applies
// to the running Envoy without a restart.
func TestControllerConfigMapConnections(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	pool := startConnectionCounter(t)
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// An RSA certificate, as settings/tls.go's ECDHE-RSA ciphers need.
	secure := ca.IssueWithKey(t, rsaKey, "secure", "secure.example.com", "own.example.com")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha)+readyServiceYAML("pool", pool.backend)+tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM))
	writeManifest(t, dir, "ingresses.yaml", connectionIngressesYAML)
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(nil))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	configure := func(data map[string]string) {
		t.Helper()
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(data))
	}
	tlsConfig := func() *tls.Config {
		return &tls.Config{ServerName: "secure.example.com", RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	}
	for _, host := range []string{"plain.example.com", "pool.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			status, err := getStatus(envoy.HTTPAddress, host, "/", nil)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("status %d", status)
			}
			return err
		})
	}
	framework.Eventually(t, convergeTimeout, "secure.example.com over HTTPS", func() error {
		_, err := httpsGet(envoy.HTTPSAddress, tlsConfig())
		return err
	})

	// settings/tls.go "should configure TLS protocol", "setting cipher
	// suite": ssl-ciphers ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-SHA
	// with ssl-protocols TLSv1.2: a client gets TLS 1.2 and the first of
	// them; one offering only another suite, or only TLS 1.3, fails its
	// handshake. An Ingress's ssl-ciphers annotation (ingress-nginx's
	// SSLCipher parser, per server) overrides the ConfigMap's for its host.
	t.Run("ssl-protocols and ssl-ciphers", func(t *testing.T) {
		configure(map[string]string{"ssl-ciphers": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-SHA", "ssl-protocols": "TLSv1.2"})
		framework.Eventually(t, convergeTimeout, "TLS 1.2 and the ConfigMap's ciphers", func() error {
			only13 := tlsConfig()
			only13.MinVersion = tls.VersionTLS13
			if _, err := httpsGet(envoy.HTTPSAddress, only13); err == nil {
				return fmt.Errorf("a TLS 1.3 client is served")
			}
			other := tlsConfig()
			other.MaxVersion = tls.VersionTLS12
			other.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
			if _, err := httpsGet(envoy.HTTPSAddress, other); err == nil {
				return fmt.Errorf("a client offering only ECDHE-RSA-AES128-GCM-SHA256 is served")
			}
			state, err := httpsGet(envoy.HTTPSAddress, tlsConfig())
			if err != nil {
				return err
			}
			if state.Version != tls.VersionTLS12 || state.CipherSuite != tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 {
				return fmt.Errorf("TLS %x with %s, want TLS 1.2 with ECDHE-RSA-AES256-GCM-SHA384", state.Version, tls.CipherSuiteName(state.CipherSuite))
			}
			// own.example.com's Ingress has its own ssl-ciphers: the
			// annotation overrides the ConfigMap for its host.
			ownCfg := tlsConfig()
			ownCfg.ServerName = "own.example.com"
			if state, err = httpsGet(envoy.HTTPSAddress, ownCfg); err != nil {
				return fmt.Errorf("own.example.com: %w", err)
			}
			if state.CipherSuite != tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 {
				return fmt.Errorf("own.example.com: %s, want its annotation's ECDHE-RSA-AES128-GCM-SHA256", tls.CipherSuiteName(state.CipherSuite))
			}
			return nil
		})
		// ssl-protocols TLSv1.3 alone refuses a TLS 1.2 client.
		configure(map[string]string{"ssl-protocols": "TLSv1.3"})
		framework.Eventually(t, convergeTimeout, "TLS 1.3 only", func() error {
			only12 := tlsConfig()
			only12.MaxVersion = tls.VersionTLS12
			if _, err := httpsGet(envoy.HTTPSAddress, only12); err == nil {
				return fmt.Errorf("a TLS 1.2 client is served")
			}
			state, err := httpsGet(envoy.HTTPSAddress, tlsConfig())
			if err == nil && state.Version != tls.VersionTLS13 {
				err = fmt.Errorf("TLS %x, want 1.3", state.Version)
			}
			return err
		})
	})

	// annotations/auth.go switches use-http2 off for its HTTP/1.1-only
	// checks: with it false, ALPN offers http/1.1 only; by default, h2.
	t.Run("use-http2", func(t *testing.T) {
		configure(nil)
		framework.Eventually(t, convergeTimeout, "h2 by default", func() error {
			state, err := httpsGet(envoy.HTTPSAddress, tlsConfig())
			if err == nil && state.NegotiatedProtocol != "h2" {
				err = fmt.Errorf("ALPN %q, want h2", state.NegotiatedProtocol)
			}
			return err
		})
		configure(map[string]string{"use-http2": "false"})
		framework.Eventually(t, convergeTimeout, "http/1.1 only", func() error {
			state, err := httpsGet(envoy.HTTPSAddress, tlsConfig())
			if err == nil && state.NegotiatedProtocol != "http/1.1" {
				err = fmt.Errorf("ALPN %q, want http/1.1", state.NegotiatedProtocol)
			}
			return err
		})
	})

	// settings/keep-alive.go "should set keepalive_requests" and
	// "should set keepalive_timeout" (0: none): a client connection
	// carries keep-alive-requests requests, then Envoy closes it; with
	// keep-alive 0 every response closes its connection.
	t.Run("keep-alive and keep-alive-requests", func(t *testing.T) {
		configure(map[string]string{"keep-alive-requests": "2"})
		framework.Eventually(t, convergeTimeout, "two requests a connection", func() error {
			return expectConnections(envoy.HTTPAddress, "plain.example.com", 6, 3)
		})
		configure(map[string]string{"keep-alive": "0"})
		framework.Eventually(t, convergeTimeout, "no keep-alive", func() error {
			return expectConnections(envoy.HTTPAddress, "plain.example.com", 3, 3)
		})
		configure(nil)
		framework.Eventually(t, convergeTimeout, "Envoy's keep-alive", func() error {
			return expectConnections(envoy.HTTPAddress, "plain.example.com", 4, 1)
		})
	})

	// settings/keep-alive.go "Check the upstream keep alive": the
	// backend's connections from Envoy carry upstream-keepalive-requests
	// requests each; upstream-keepalive-connections 0 opens one per
	// request; by default Envoy keeps one open for every request.
	t.Run("upstream keep-alive", func(t *testing.T) {
		configure(map[string]string{"upstream-keepalive-requests": "2", "upstream-keepalive-timeout": "30", "upstream-keepalive-time": "1h"})
		framework.Eventually(t, convergeTimeout, "two requests a backend connection", func() error {
			return pool.expectPerConnection(envoy.HTTPAddress, 6, 2)
		})
		configure(map[string]string{"upstream-keepalive-connections": "0"})
		framework.Eventually(t, convergeTimeout, "a backend connection a request", func() error {
			return pool.expect(envoy.HTTPAddress, 3, 3)
		})
		configure(nil)
		framework.Eventually(t, convergeTimeout, "one backend connection", func() error {
			return pool.expect(envoy.HTTPAddress, 4, 1)
		})
	})

	// What the backend is told of the client: settings/forwarded_headers.go
	// "should not trust X-Forwarded headers when setting is false" (the
	// client's X-Forwarded-For is not the backend's, which names the
	// peer), settings/enable_real_ip.go "trusts X-Forwarded-For header
	// only when setting is true" (the client the trusted proxy names is
	// X-Forwarded-For's and X-Real-IP's), compute-full-forwarded-for (the
	// header as received with the peer appended), forwarded-for-header (the
	// client named by a header of its own).
	t.Run("the client's address", func(t *testing.T) {
		// From a network namespace: Envoy writes its host's own address
		// for a loopback peer in X-Forwarded-For.
		client := framework.NewNetns(t).Client()
		peer := client.IP
		for _, c := range []struct {
			name     string
			data     map[string]string
			header   http.Header
			xff, xri string
		}{
			{"not trusted", nil, http.Header{"X-Forwarded-For": {"1.2.3.4"}}, peer, peer},
			{"enable-real-ip, the peer trusted", map[string]string{"enable-real-ip": "true", "proxy-real-ip-cidr": peer + "/32"},
				http.Header{"X-Forwarded-For": {"1.2.3.4"}}, "1.2.3.4", "1.2.3.4"},
			{"enable-real-ip, past the trusted CIDRs", map[string]string{"enable-real-ip": "true", "proxy-real-ip-cidr": peer + ", 10.0.0.0/8"},
				http.Header{"X-Forwarded-For": {"1.2.3.4, 5.6.7.8, 10.0.0.1"}}, "5.6.7.8", "5.6.7.8"},
			{"enable-real-ip, the peer not trusted", map[string]string{"enable-real-ip": "true", "proxy-real-ip-cidr": "10.0.0.0/8"},
				http.Header{"X-Forwarded-For": {"1.2.3.4"}}, peer, peer},
			{"compute-full-forwarded-for", map[string]string{"use-forwarded-headers": "true", "compute-full-forwarded-for": "true"},
				http.Header{"X-Forwarded-For": {"1.2.3.4"}}, "1.2.3.4," + peer, "1.2.3.4"},
			{"forwarded-for-header", map[string]string{"use-forwarded-headers": "true", "forwarded-for-header": "X-Client-IP"},
				http.Header{"X-Client-Ip": {"9.8.7.6"}, "X-Forwarded-For": {"1.2.3.4"}}, "9.8.7.6", "9.8.7.6"},
		} {
			t.Run(c.name, func(t *testing.T) {
				configure(c.data)
				framework.Eventually(t, convergeTimeout, "the backend's view", func() error {
					r, err := client.Get(cp.HTTPPort, "plain.example.com", "/", c.header)
					if err != nil {
						return err
					}
					if r.Status != http.StatusOK {
						return fmt.Errorf("status %d", r.Status)
					}
					xff := strings.ReplaceAll(strings.Join(r.Echo.Header.Values("X-Forwarded-For"), ","), " ", "")
					if xri := r.Echo.Header.Get("X-Real-Ip"); xff != c.xff || xri != c.xri {
						return fmt.Errorf("X-Forwarded-For %q, X-Real-IP %q; want %q, %q", xff, xri, c.xff, c.xri)
					}
					return nil
				})
			})
		}
	})

	// settings/log-format.go (log-format-upstream with a header's value,
	// read in the controller's log): every request is a line of Envoy's
	// standard output in the ConfigMap's format, $namespace the route's
	// Ingress's; a format with a variable without an Envoy form is
	// refused as a whole and reported, never printed with a "-" in its
	// place; with log-format-escape-json, a JSON line with every value
	// escaped.
	t.Run("log-format-upstream", func(t *testing.T) {
		configure(map[string]string{"log-format-upstream": `{"marker": "$http_x_log_marker", "status": $status, "method": "$request_method", "uri": "$uri", "ns": "$namespace"}`})
		line := func(marker string) string {
			return fmt.Sprintf(`{"marker": "%s", "status": 200, "method": "GET", "uri": "/logged", "ns": "default"}`, marker)
		}
		request := func(marker string) error {
			status, err := getStatus(envoy.HTTPAddress, "plain.example.com", "/logged?a=b", http.Header{"X-Log-Marker": {marker}})
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("status %d", status)
			}
			return err
		}
		// Envoy writes its access log out about once a second: first
		// until some line shows the format applied, then one request and
		// its line.
		framework.Eventually(t, convergeTimeout, "the access log on", func() error {
			if err := request("warm-up"); err != nil {
				return err
			}
			if !strings.Contains(envoy.Output(), line("warm-up")) {
				return fmt.Errorf("no line %s in Envoy's output", line("warm-up"))
			}
			return nil
		})
		if err := request("m1-marker"); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, convergeTimeout, "the request's line", func() error {
			if !strings.Contains(envoy.Output(), line("m1-marker")) {
				return fmt.Errorf("no line %s in Envoy's output", line("m1-marker"))
			}
			return nil
		})
		// Refused, the key is unset: without --nginx-defaults, no access
		// log, which the listeners' configuration shows.
		configure(map[string]string{"log-format-upstream": `$remote_addr $pid "$http_x_log_marker"`})
		framework.Eventually(t, convergeTimeout, "the access log off", func() error {
			_, listeners, err := envoy.Admin("/config_dump?resource=dynamic_listeners")
			if err != nil {
				return err
			}
			if !strings.Contains(listeners, "ingress_http") || strings.Contains(listeners, "FileAccessLog") {
				return fmt.Errorf("Envoy's listeners still have an access log")
			}
			return nil
		})
		if !strings.Contains(cp.Output(), "no Envoy form for $pid") {
			t.Errorf("the control plane does not report $pid")
		}

		// log-format-escape-json (settings/log-format.go's escape=json
		// case): the values escaped as JSON, a quote and a backslash in a
		// header included; a lone variable is written typed.
		configure(map[string]string{"log-format-escape-json": "true", "log-format-upstream": `{"marker": "$http_x_log_marker", "status": $status, "uri": "$uri"}`})
		want := `{"marker":"m3 \"quoted\" \\ marker","status":200,"uri":"/logged"}`
		framework.Eventually(t, convergeTimeout, "the JSON line", func() error {
			if err := request(`m3 "quoted" \ marker`); err != nil {
				return err
			}
			if !strings.Contains(envoy.Output(), want) {
				return fmt.Errorf("no line %s in Envoy's output", want)
			}
			return nil
		})
	})
}

// httpsGet sends GET / for cfg's server name over a new TLS connection
// with cfg, and returns the connection's state.
func httpsGet(address string, cfg *tls.Config) (tls.ConnectionState, error) {
	tr := &http.Transport{Proxy: nil, TLSClientConfig: cfg, ForceAttemptHTTP2: true, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, "https://"+address+"/", nil)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	req.Host = cfg.ServerName
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		return tls.ConnectionState{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	return *resp.TLS, nil
}

// getStatus sends one GET on a new connection and returns its status.
func getStatus(address, host, path string, h http.Header) (int, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+path, nil)
	if err != nil {
		return 0, err
	}
	req.Host = host
	req.Header = h
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// expectConnections sends n requests one after the other through one
// keep-alive client and checks how many connections they took.
func expectConnections(address, host string, n, want int) error {
	tr := &http.Transport{Proxy: nil}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	opened := 0
	for i := range n {
		req, err := http.NewRequest(http.MethodGet, "http://"+address+"/", nil)
		if err != nil {
			return err
		}
		req.Host = host
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused {
					opened++
				}
			},
		}))
		resp, err := c.Do(req)
		if err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("request %d: status %d", i+1, resp.StatusCode)
		}
		// Envoy's closing of a connection may race the next request on
		// it; the client must see the close first.
		if resp.Close {
			tr.CloseIdleConnections()
		}
	}
	if opened != want {
		return fmt.Errorf("%d requests took %d connections, want %d", n, opened, want)
	}
	return nil
}

// connectionCounter is a backend that notes the connection each request
// came on (Envoy's connection to it).
type connectionCounter struct {
	backend *framework.Backend
	mu      sync.Mutex
	peers   []string
}

func startConnectionCounter(t *testing.T) *connectionCounter {
	t.Helper()
	c := &connectionCounter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.peers = append(c.peers, r.RemoteAddr)
		c.mu.Unlock()
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(srv.Close)
	c.backend = serverBackend(t, "pool", srv)
	return c
}

// serverBackend is a test's own HTTP server as a backend named name, for
// the Services of the manifests.
func serverBackend(t *testing.T, name string, srv *httptest.Server) *framework.Backend {
	t.Helper()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return &framework.Backend{Name: name, Host: host, Port: p}
}

// expect sends n requests to pool.example.com one after the other and
// checks how many of Envoy's connections the backend saw them on.
// send makes n requests to pool.example.com through Envoy, one after the
// other, and returns the backend connection each one came on, in order.
func (c *connectionCounter) send(address string, n int) ([]string, error) {
	c.mu.Lock()
	c.peers = nil
	c.mu.Unlock()
	for i := range n {
		status, err := getStatus(address, "pool.example.com", "/", nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("request %d: status %d", i+1, status)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.peers), nil
}

func (c *connectionCounter) expect(address string, n, want int) error {
	peers, err := c.send(address, n)
	if err != nil {
		return err
	}
	slices.Sort(peers)
	if got := len(slices.Compact(peers)); len(peers) != n || got != want {
		return fmt.Errorf("%d requests reached the backend on %d connections, want %d requests on %d", len(peers), got, n, want)
	}
	return nil
}

// expectPerConnection sends n requests and checks that the backend's
// connections from Envoy carried at most per requests each, and that those
// it opened for them carried exactly per. A connection opened before the
// n requests may have served some already, so the first connection and
// the last one (which may stay open for the next call) can carry fewer;
// counting connections, as expect does, would then see one more.
func (c *connectionCounter) expectPerConnection(address string, n, per int) error {
	peers, err := c.send(address, n)
	if err != nil {
		return err
	}
	if len(peers) != n {
		return fmt.Errorf("%d requests reached the backend, want %d", len(peers), n)
	}
	// Requests are sequential, so each connection's requests are one run.
	var runs []int
	for i, p := range peers {
		if i == 0 || p != peers[i-1] {
			runs = append(runs, 0)
		}
		runs[len(runs)-1]++
	}
	for i, r := range runs {
		inner := i > 0 && i < len(runs)-1
		if r > per || (inner && r != per) {
			return fmt.Errorf("requests per backend connection %v, want at most %d, and %d on every connection but the first and last", runs, per, per)
		}
	}
	if len(runs) < n/per {
		return fmt.Errorf("requests per backend connection %v: fewer connections than %d requests at %d each need", runs, n, per)
	}
	return nil
}

const connectionIngressesYAML = `
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
metadata:
  name: own
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/ssl-ciphers: "ECDHE-RSA-AES128-GCM-SHA256"}
spec:
  tls: [{hosts: [own.example.com], secretName: secure-cert}]
  rules:
  - host: own.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: pool, namespace: default}
spec:
  rules:
  - host: pool.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pool, port: {number: 80}}}}]}
`

// TestNginxDefaultsAccessLog checks that serve --nginx-defaults logs every
// request, as ingress-nginx does by default, in its default
// log-format-upstream translated to Envoy's operators (settings/log-format.go
// reads the controller's log the same way): the client, the request line,
// the status, the User-Agent, ingress-nginx's upstream name, no canary, the
// upstream's address and the request's X-Request-ID
// (TestAccessLogLikeIngressNginx compares each field).
func TestNginxDefaultsAccessLog(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", connectionIngressesYAML)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--nginx-defaults")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "plain.example.com served", func() error {
		return envoy.Expect("plain.example.com", "/", http.StatusOK, "alpha")
	})
	h := http.Header{"User-Agent": {"m1-agent"}, "X-Request-Id": {"m1-request-1"}}
	if status, err := getStatus(envoy.HTTPAddress, "plain.example.com", "/logged?a=b", h); err != nil || status != http.StatusOK {
		t.Fatalf("GET /logged: %d, %v", status, err)
	}
	line := regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] "GET /logged\?a=b HTTP/1\.1" 200 \d+ "-" "m1-agent" \d+ \d+\.\d{3} ` +
		`\[default-alpha-80\] \[\] 127\.0\.0\.1:` + strconv.Itoa(alpha.Port) + ` \d+ \d+ 200 m1-request-1$`)
	framework.Eventually(t, convergeTimeout, "the request's line", func() error {
		out := envoy.Output()
		if !line.MatchString(out) {
			i := strings.Index(out, "m1-agent")
			return fmt.Errorf("no line matching %s in Envoy's output (around the User-Agent: %q)", line, out[max(0, i-200):min(len(out), i+200)])
		}
		return nil
	})
}

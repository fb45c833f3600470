package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestProxyAnnotations checks ingress-nginx's proxy keys through a real
// Envoy, by what a client sees: the read timeout bounds the pauses of a
// response and not its length, the body size is a 413, and retries reach
// another endpoint when the first fails. ingress-nginx's own tests
// (test/e2e/annotations/proxy.go) only look for the directives in
// nginx.conf; each scenario here names the one it mirrors and nginx's
// documentation of the directive, which says what the client sees.
func TestProxyAnnotations(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	// A port nothing listens on: connecting to it is refused.
	refused := closedPort(t)
	// An endpoint that always answers 503.
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	t.Cleanup(unavailable.Close)
	_, port503, _ := net.SplitHostPort(unavailable.Listener.Addr().String())

	// A port whose connections are never accepted: connecting times out.
	unanswered := unansweredPort(t)
	// A port that takes each request whole and resets its connection
	// without an answer: the request was sent.
	resetting := resettingPort(t)

	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha) +
			twoEndpointService("refusing", alpha.Port, refused) +
			twoEndpointService("failing", alpha.Port, mustAtoi(t, port503)) +
			twoEndpointService("resetting", alpha.Port, resetting) +
			portService("dead", refused) +
			portService("unavailable", mustAtoi(t, port503)) +
			portService("unanswered", unanswered) +
			"---\napiVersion: v1\nkind: Service\nmetadata: {name: empty, namespace: default}\nspec:\n  ports: [{port: 80}]\n"},
		manifest{"ingresses.yaml", proxyIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	for _, host := range []string{"read.example.com", "plain.example.com", "body.example.com", "stream.example.com", "connect.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	framework.Eventually(t, convergeTimeout, "the retrying hosts served", func() error {
		for _, host := range []string{"retry.example.com", "retry503.example.com", "default.example.com", "nonidempotent.example.com", "sent.example.com", "sent-nonidempotent.example.com"} {
			if err := envoy.Expect(host, "/", http.StatusOK, "alpha"); err != nil {
				return err
			}
		}
		return nil
	})

	// proxy.go "should set valid proxy timeouts": the connect timeout is
	// a cluster's. connect.example.com was served above, so the cluster of
	// that policy has the Service's endpoints; Envoy holds its timeout.
	t.Run("connect timeout", func(t *testing.T) {
		if dump := envoy.ConfigDump(); !strings.Contains(dump, `"connect_timeout": "7s"`) {
			t.Errorf("no cluster with proxy-connect-timeout's 7 s in Envoy's configuration")
		}
	})

	// The response trickles 9 lines 2 s apart: about 16 s in all, past
	// Envoy's default 15 s route timeout, never silent for the 4 s of
	// proxy-read-timeout.
	const trickle = "/?chunks=9&every=2s"
	t.Run("timeouts", func(t *testing.T) {
		// proxy.go "should set valid proxy timeouts"; nginx's
		// proxy_read_timeout: "set only between two successive read
		// operations, not for the transmission of the whole response".
		t.Run("a response longer than 15 s in all, never pausing past the read timeout, is served whole", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "read.example.com", trickle, nil)
			if r.err != nil || r.status != http.StatusOK || strings.Count(r.body, "\n") != 9 {
				t.Errorf("GET %s: %s, want all 9 lines", trickle, r)
			}
		})
		// Without the annotation Envoy's default 15 s timeout cuts it:
		// what the annotation is for.
		t.Run("without it, the same response is cut", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "plain.example.com", trickle, nil)
			if r.err == nil && strings.Count(r.body, "\n") == 9 {
				t.Errorf("GET %s on a route with no read timeout: %s, want it cut short", trickle, r)
			}
		})
		// A pause past the read timeout once the response has begun:
		// nginx closes the connection, and so does Envoy; the client
		// has the first line and a truncated body.
		t.Run("a pause past the read timeout ends the response", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "read.example.com", "/?chunks=2&every=6s", nil)
			if r.err == nil || r.status != http.StatusOK || r.body != "chunk 1 of 2\n" {
				t.Errorf("a 6 s pause after the first line: %s, want the first line and then a cut", r)
			}
		})
		// Silence before the headers: nginx answers 504, and so does
		// Envoy.
		t.Run("silence past the read timeout before the response is a 504", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "read.example.com", "/?wait=6s", nil)
			if r.err != nil || r.status != http.StatusGatewayTimeout || r.backend != "" {
				t.Errorf("6 s before the headers: %s, want 504 from Envoy", r)
			}
		})
	})

	// proxy.go "should set proxy client-max-body-size to 8m" and
	// ingress-nginx's docs (#custom-max-body-size): over the size, 413.
	t.Run("body size", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			host    string
			body    io.Reader
			status  int
			backend string
		}{
			{"over the size, with a Content-Length", "body.example.com", bytes.NewReader(make([]byte, 2048)), http.StatusRequestEntityTooLarge, ""},
			{"over the size, chunked", "body.example.com", io.MultiReader(bytes.NewReader(make([]byte, 2048))), http.StatusRequestEntityTooLarge, ""},
			{"under the size", "body.example.com", bytes.NewReader(make([]byte, 1000)), http.StatusOK, "alpha"},
			{"exactly the size", "body.example.com", bytes.NewReader(make([]byte, 1024)), http.StatusOK, "alpha"},
			// proxy.go "should turn off proxy-request-buffering": the
			// body streams, and Envoy can bound only a body it buffers.
			{"with request buffering off, the body streams unbounded", "stream.example.com", io.MultiReader(bytes.NewReader(make([]byte, 4096))), http.StatusOK, "alpha"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := send(t, envoy, http.MethodPost, tc.host, "/upload", tc.body)
				if r.err != nil || r.status != tc.status || r.backend != tc.backend {
					t.Errorf("POST to %s: %s, want %d from %q", tc.host, r, tc.status, tc.backend)
				}
			})
		}
	})

	// proxy.go "should build proxy next upstream"; nginx's
	// proxy_next_upstream: a failed try is passed to the next server.
	// Each Service has a working endpoint and a failing one; Envoy
	// round-robins between them, so a route that does not retry fails
	// about every other request.
	t.Run("retries", func(t *testing.T) {
		const n = 8
		count := func(method, host string) (ok, failed int) {
			for range n {
				r := send(t, envoy, method, host, "/", nil)
				if r.err == nil && r.status == http.StatusOK && r.backend == "alpha" {
					ok++
				} else {
					failed++
				}
			}
			return ok, failed
		}
		// ingress-nginx's defaults, without any annotation: config.go
		// (internal/ingress/controller/config) sets ProxyNextUpstream
		// "error timeout" and ProxyNextUpstreamTries 3, which nginx.tmpl
		// writes into every location's proxy_next_upstream, and its
		// docs (nginx-configuration/configmap.md, proxy-next-upstream:
		// "error timeout", proxy-next-upstream-tries: 3) list them as
		// the defaults. A pod that refuses connections is skipped.
		t.Run("by default, a refusing endpoint is skipped", func(t *testing.T) {
			const n = 20
			ok := 0
			for range n {
				r := send(t, envoy, http.MethodGet, "default.example.com", "/", nil)
				if r.err == nil && r.status == http.StatusOK && r.backend == "alpha" {
					ok++
				}
			}
			if ok != n {
				t.Errorf("no annotation, one endpoint of two refusing: %d of %d GETs answered 200, want all", ok, n)
			}
		})
		// nginx passes any request whose connection failed to the next
		// server, a POST, LOCK or PATCH too: it was not sent
		// (ngx_http_upstream.c, ngx_http_upstream_next adds
		// NGX_HTTP_UPSTREAM_FT_NON_IDEMPOTENT only when
		// u->request_sent).
		t.Run("by default, a request of any method whose connection is refused is retried", func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodPatch, "LOCK", http.MethodPut, http.MethodDelete} {
				if ok, failed := count(method, "default.example.com"); failed != 0 {
					t.Errorf("no annotation, %s, one endpoint of two refusing: %d of %d served, want all (not sent, so retried)", method, ok, n)
				}
			}
		})
		// Once sent, nginx does not pass a POST, LOCK or PATCH to the
		// next server (proxy_next_upstream, "non_idempotent"), and any
		// other method on ("error": "an error occurred while ...
		// passing a request to it, or reading the response header").
		t.Run("by default, once sent, POST, PATCH and LOCK are not retried, GET, PUT and DELETE are", func(t *testing.T) {
			for _, tc := range []struct {
				method  string
				retried bool
			}{{http.MethodGet, true}, {http.MethodPut, true}, {http.MethodDelete, true}, {http.MethodPost, false}, {http.MethodPatch, false}, {"LOCK", false}} {
				ok, failed := count(tc.method, "sent.example.com")
				if tc.retried && failed != 0 {
					t.Errorf("no annotation, %s, one endpoint of two resetting: %d of %d served, want all (retried)", tc.method, ok, n)
				}
				if !tc.retried && failed == 0 {
					t.Errorf("no annotation, %s, one endpoint of two resetting: all %d served, want some meeting it (not retried once sent)", tc.method, n)
				}
			}
			// The failed POSTs get nginx's status for a connection
			// closed before the response, and a client cannot undo it
			// with the headers Envoy's router reads.
			failed := 0
			for range n {
				r := sendHeaders(t, envoy, http.MethodPost, "sent.example.com", "/", strings.NewReader("x"),
					map[string]string{"x-envoy-max-retries": "2", "x-envoy-retry-on": "reset,5xx"})
				if r.err != nil || r.status != http.StatusOK {
					failed++
					if r.status != http.StatusBadGateway {
						t.Errorf("POST meeting the resetting endpoint: %s, want 502", r)
					}
				}
			}
			if failed == 0 {
				t.Errorf("no annotation, POST with x-envoy-retry-on and x-envoy-max-retries: all %d served, want some meeting the resetting endpoint (still not retried)", n)
			}
		})
		// proxy_next_upstream's non_idempotent passes them on too, sent
		// or not.
		t.Run("non_idempotent retries POST", func(t *testing.T) {
			for _, host := range []string{"nonidempotent.example.com", "sent-nonidempotent.example.com"} {
				for _, method := range []string{http.MethodPost, http.MethodPatch, http.MethodGet} {
					if ok, failed := count(method, host); failed != 0 {
						t.Errorf("%s, error timeout non_idempotent, %s: %d of %d served, want all", host, method, ok, n)
					}
				}
			}
		})
		if ok, failed := count(http.MethodGet, "retry.example.com"); failed != 0 {
			t.Errorf("error timeout, 2 tries, one endpoint refusing: %d of %d served, want all", ok, n)
		}
		if _, failed := count(http.MethodGet, "noretry.example.com"); failed == 0 {
			t.Errorf("off, one endpoint refusing: every request served, want some refused (the test proves nothing)")
		}
		if ok, failed := count(http.MethodGet, "retry503.example.com"); failed != 0 {
			t.Errorf("http_503, 2 tries, one endpoint answering 503: %d of %d served, want all", ok, n)
		}
		// nginx passes no POST to the next server once sent, unless
		// told non_idempotent.
		if _, failed := count(http.MethodPost, "retry503.example.com"); failed == 0 {
			t.Errorf("http_503, POST: every request served, want the 503s passed on (POST is not retried)")
		}
	})

	// What a client gets when no endpoint answers: nginx's status for
	// each cause, not Envoy's 503 for all. ngx_http_upstream_next answers
	// NGX_HTTP_GATEWAY_TIME_OUT (504) for NGX_HTTP_UPSTREAM_FT_TIMEOUT and
	// NGX_HTTP_BAD_GATEWAY (502) for NGX_HTTP_UPSTREAM_FT_ERROR (a refused
	// or reset connection); ingress-nginx's Lua balancer (balancer.lua,
	// rewrite) answers 503 when the Service has no endpoint. Each request
	// goes through the default retries first (3 tries), as in nginx.
	t.Run("status codes", func(t *testing.T) {
		// Both endpoints refused.
		t.Run("a refused connection is a 502", func(t *testing.T) {
			t.Parallel()
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				r := send(t, envoy, method, "dead.example.com", "/", nil)
				if r.err != nil || r.status != http.StatusBadGateway || r.backend != "" {
					t.Errorf("%s to a Service whose endpoint refuses: %s, want 502 from Envoy", method, r)
				}
			}
		})
		// proxy-connect-timeout "1": each of the 3 tries waits 1 s for a
		// connection that never comes. The wait is Envoy's own clock,
		// which a test cannot replace; the test only checks it happened
		// (at least 1 s), never sleeps.
		t.Run("a connect timeout is a 504", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "unanswered.example.com", "/", nil)
			if r.err != nil || r.status != http.StatusGatewayTimeout || r.backend != "" || r.took < time.Second {
				t.Errorf("GET to an endpoint that never accepts, connect timeout 1 s: %s, want 504 from Envoy after 1 s or more", r)
			}
		})
		t.Run("a Service without endpoints is a 503", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "empty.example.com", "/", nil)
			if r.err != nil || r.status != http.StatusServiceUnavailable || r.backend != "" {
				t.Errorf("GET to a Service without endpoints: %s, want 503 from Envoy", r)
			}
		})
		// A backend's own 502, 503 and 504 pass unchanged: only Envoy's
		// answers are mapped.
		t.Run("a backend's own 503 passes unchanged", func(t *testing.T) {
			t.Parallel()
			r := send(t, envoy, http.MethodGet, "noretry503.example.com", "/", nil)
			if r.err != nil || r.status != http.StatusServiceUnavailable || r.body != "unavailable\n" {
				t.Errorf("GET to an endpoint answering 503: %s, want its 503", r)
			}
		})
	})
}

const proxyIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: read
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-read-timeout: "4"}
spec:
  rules:
  - host: read.example.com
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
metadata:
  name: connect
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-connect-timeout: "7"}
spec:
  rules:
  - host: connect.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: body
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 1k}
spec:
  rules:
  - host: body.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: stream
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 1k, nginx.ingress.kubernetes.io/proxy-request-buffering: "off"}
spec:
  rules:
  - host: stream.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: retry
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "error timeout", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "2"}
spec:
  rules:
  - host: retry.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: default-retry, namespace: default}
spec:
  rules:
  - host: default.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: sent, namespace: default}
spec:
  rules:
  - host: sent.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: resetting, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: sent-nonidempotent
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "error timeout non_idempotent"}
spec:
  rules:
  - host: sent-nonidempotent.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: resetting, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: dead, namespace: default}
spec:
  rules:
  - host: dead.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: dead, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: unanswered
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-connect-timeout: "1"}
spec:
  rules:
  - host: unanswered.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: unanswered, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: empty, namespace: default}
spec:
  rules:
  - host: empty.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: empty, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: noretry503
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "off"}
spec:
  rules:
  - host: noretry503.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: unavailable, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: noretry
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "off"}
spec:
  rules:
  - host: noretry.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: retry503
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "http_503", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "2"}
spec:
  rules:
  - host: retry503.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: failing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: nonidempotent
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "error timeout non_idempotent"}
spec:
  rules:
  - host: nonidempotent.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
`

// twoEndpointService is a Service with two endpoints on 127.0.0.1, at the
// two ports (one EndpointSlice each, as a slice has one port list).
func twoEndpointService(name string, port1, port2 int) string {
	s := fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\nspec:\n  ports: [{port: 80}]\n", name)
	for i, port := range []int{port1, port2} {
		s += fmt.Sprintf(`---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-%[2]d, namespace: default, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{port: %[3]d}]
endpoints: [{addresses: ["127.0.0.1"], conditions: {ready: true}}]
`, name, i, port)
	}
	return s
}

// unansweredPort returns a port of 127.0.0.1 where connecting times out,
// on loopback and without privileges: a listener with the shortest accept
// queue, never accepting, filled by connections of its own, after which
// the kernel drops every further SYN (tcp_conn_request: the accept queue
// is full), so a connect waits until its timeout.
func unansweredPort(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	address := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for range 16 {
		c, err := net.DialTimeout("tcp", address, 300*time.Millisecond)
		if err != nil {
			return port // the queue is full: this SYN was dropped
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatalf("connections to %s never stopped being accepted into its queue", address)
	return 0
}

// closedPort returns a port of 127.0.0.1 that nothing listens on, and that
// no other test is handed while this one runs (framework.FreePort).
// resettingPort returns a port of 127.0.0.1 that reads each request's
// headers and resets the connection without an answer, as a backend that
// dies with the request in hand.
func resettingPort(t *testing.T) int {
	t.Helper()
	return serveTCP(t, func(c net.Conn) {
		var got []byte
		buf := make([]byte, 4096)
		for !strings.Contains(string(got), "\r\n\r\n") {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			got = append(got, buf[:n]...)
		}
		c.(*net.TCPConn).SetLinger(0) // close with RST
	})
}

// serveTCP serves plain TCP on loopback until the test ends, each
// connection handed to handle and closed after; it returns the port.
func serveTCP(t *testing.T, handle func(net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

func closedPort(t *testing.T) int {
	t.Helper()
	return framework.FreePort(t)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// sent is what a client saw of one exchange: the status and the body it
// read, and the error that ended reading, if any (a response cut short).
type sent struct {
	status  int
	backend string
	body    string
	err     error
	took    time.Duration
}

func (s sent) String() string {
	return fmt.Sprintf("status %d from %q after %v, body %q, error %v", s.status, s.backend, s.took.Round(time.Millisecond), s.body, s.err)
}

// send sends one request to Envoy's HTTP listener on a new connection and
// reads the whole answer. The client's own timeout only guards against a
// hang.
func send(t *testing.T, envoy *framework.Envoy, method, host, path string, body io.Reader) sent {
	t.Helper()
	return sendHeaders(t, envoy, method, host, path, body, nil)
}

// sendHeaders is send with request headers.
func sendHeaders(t *testing.T, envoy *framework.Envoy, method, host, path string, body io.Reader, headers map[string]string) sent {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return sent{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	s := sent{status: resp.StatusCode, backend: resp.Header.Get("X-Backend"), body: string(got), err: err, took: time.Since(start)}
	t.Logf("%s %s%s: %s", method, host, path, s)
	return s
}

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// bodyArrival is a backend that says when a request reaches it and what
// body it read.
type bodyArrival struct {
	backend *framework.Backend
	entered chan struct{}
	bodies  chan string
}

func startBodyArrival(t *testing.T) *bodyArrival {
	t.Helper()
	b := &bodyArrival{entered: make(chan struct{}, 4), bodies: make(chan string, 4)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			fmt.Fprintln(w, "ok")
			return
		}
		b.entered <- struct{}{}
		body, _ := io.ReadAll(r.Body)
		b.bodies <- string(body)
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(srv.Close)
	b.backend = serverBackend(t, "arrival", srv)
	return b
}

const bufferingIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: buffered, namespace: default}
spec:
  ingressClassName: nginx
  rules:
  - host: buffered.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: arrival, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: streamed
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-request-buffering: "off"}
spec:
  ingressClassName: nginx
  rules:
  - host: streamed.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: arrival, port: {number: 80}}}}]}
`

// TestRequestBuffering checks through a real Envoy that a request body is
// buffered by default, as ingress-nginx's proxy-request-buffering "on"
// (internal/ingress/controller/config/config.go; nginx's
// proxy_request_buffering: "the whole request body is read from the
// client before sending the request to a proxied server"): a client that
// pauses mid-body holds no backend connection, and the backend receives
// the body whole. The control plane serves ingress-nginx's class, so
// ingress-nginx's defaults (a 1m body bound, the buffer's size) apply
// without --nginx-defaults. With proxy-request-buffering "off" the
// request reaches the backend before the body ends.
func TestRequestBuffering(t *testing.T) {
	arrival := startBodyArrival(t)
	fm := startFileModeWith(t, []string{"--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx"},
		manifest{"services.yaml", readyServiceYAML("arrival", arrival.backend)},
		manifest{"ingresses.yaml", bufferingIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	for _, host := range []string{"buffered.example.com", "streamed.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			status, err := getStatus(envoy.HTTPAddress, host, "/", nil)
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("status %d", status)
			}
			return err
		})
	}
	first, second := strings.Repeat("a", 2048), strings.Repeat("b", 2048)
	// post sends a POST of first+second to host, pausing after first
	// until next says go on; it returns the status line.
	post := func(host string, next func()) (string, error) {
		conn, err := net.Dial("tcp", envoy.HTTPAddress)
		if err != nil {
			return "", err
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", host, len(first)+len(second), first)
		next()
		if _, err := io.WriteString(conn, second); err != nil {
			return "", err
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		return bufio.NewReader(conn).ReadString('\n')
	}
	// How long a request that would stream is given to show up at the
	// backend: no clock of ours decides when Envoy forwards, so this only
	// bounds the wait for an event that must not happen; the streamed
	// case below shows the same wait sees it when it does.
	const absence = 2 * time.Second

	t.Run("buffered by default: the backend waits for the whole body", func(t *testing.T) {
		status, err := post("buffered.example.com", func() {
			select {
			case <-arrival.entered:
				t.Error("the request reached the backend before the client sent the rest of its body")
			case <-time.After(absence):
			}
		})
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
			t.Fatalf("POST: %q, %v", status, err)
		}
		<-arrival.entered
		if body := <-arrival.bodies; body != first+second {
			t.Errorf("the backend read %d bytes, want the %d sent", len(body), len(first)+len(second))
		}
	})

	t.Run("proxy-request-buffering off: the request streams", func(t *testing.T) {
		status, err := post("streamed.example.com", func() {
			select {
			case <-arrival.entered:
			case <-time.After(absence):
				t.Error("the request did not reach the backend before the rest of its body, with proxy-request-buffering off")
			}
		})
		if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
			t.Fatalf("POST: %q, %v", status, err)
		}
		if body := <-arrival.bodies; body != first+second {
			t.Errorf("the backend read %d bytes, want the %d sent", len(body), len(first)+len(second))
		}
	})
}

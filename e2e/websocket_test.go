package e2e

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestWebSocketUpgrade: a WebSocket handshake through Envoy reaches the
// backend, which answers 101, and the upgraded connection carries bytes both
// ways, on a route with no annotation and on a rewritten one: nginx passes
// upgrades on every location (ingress-nginx's docs/user-guide/miscellaneous.md
// "WebSockets": "Support for websockets is provided by NGINX out of the box.
// No special configuration required").
func TestWebSocketUpgrade(t *testing.T) {
	b := echoBackends(t, "ws")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"ws.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ws, namespace: default}
spec:
  rules: [{host: ws.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: ws, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ws-rewritten, namespace: default, annotations: {nginx.ingress.kubernetes.io/rewrite-target: /socket}}
spec:
  rules: [{host: rewritten.example.com, http: {paths: [{path: /ws, pathType: Prefix, backend: {service: {name: ws, port: {number: 80}}}}]}}]
`})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "routes served", func() error {
		if err := envoy.Expect("ws.example.com", "/", http.StatusOK, "ws"); err != nil {
			return err
		}
		return expectUpstream(envoy, "rewritten.example.com", "/ws", "/socket", "")
	})
	for _, host := range []string{"ws.example.com", "rewritten.example.com"} {
		t.Run(host, func(t *testing.T) {
			if err := webSocketEcho(envoy.HTTPAddress, host, "/ws", "hello through envoy"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// webSocketEcho sends a WebSocket handshake, expects 101, then sends msg on
// the upgraded connection and expects it back.
func webSocketEcho(address, host, path, msg string) error {
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", path, host)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return fmt.Errorf("reading the handshake's answer: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		return fmt.Errorf("handshake answered %s (Upgrade %q), want 101 websocket", resp.Status, resp.Header.Get("Upgrade"))
	}
	if _, err := io.WriteString(conn, msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(r, got); err != nil {
		return fmt.Errorf("reading the echo: %w", err)
	}
	if string(got) != msg {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}

package e2e

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPITLSRoute checks a TLSRoute through a real Envoy: a TLS
// listener in Passthrough mode on Envoy's HTTPS port hands the
// connections of the Route's host, chosen by SNI, to its backend as they
// are, so the client sees the backend's own certificate; beside it, the
// HTTPS listener without a hostname still terminates every other name
// with its certificate; and a TLSRoute whose backend does not resolve
// has its connections closed before any TLS, not answered with another
// listener's certificate (as the conformance suite's
// TLSRouteInvalidBackendRefNonexistent expects). A TLS listener in
// Terminate mode ends the TLS of its host's connections with its own
// certificate and sends the backend what the client sent within, in
// plain TCP (as the suite's TLSRouteTerminateSimpleSameNamespace expects
// of tcp-backend: conformance/tests/tlsroute-terminate-simple-same-namespace.go
// of sigs.k8s.io/gateway-api v1.6.3).
func TestGatewayAPITLSRoute(t *testing.T) {
	backendCA := framework.NewCA(t, "backend CA")
	backendPair := backendCA.Issue(t, "the backend itself", "pass.example.com")
	secure := startTLSEcho(t, "secure", backendPair, backendCA)
	ca := framework.NewCA(t, "gateway CA")
	fallback := ca.Issue(t, "fallback", "fallback.example.org")
	terminating := ca.Issue(t, "terminating", "term.example.net")
	plainTCP, otherTCP := startTCPEcho(t, "echo"), startTCPEcho(t, "other")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha")...) + portService("secure", secure.Port) + portService("plain-tcp", plainTCP) + portService("other-tcp", otherTCP)},
		manifest{"secrets.yaml", tlsSecretYAML("fallback-cert", fallback.CertPEM, fallback.KeyPEM) + tlsSecretYAML("term-cert", terminating.CertPEM, terminating.KeyPEM)})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds")
	})
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayTLSRouteYAML, cp.HTTPSPort, cp.HTTPSPort, cp.HTTPSPort))
	framework.Eventually(t, convergeTimeout, "the TLSRoute's host passed through", func() error {
		return framework.ExpectTLS(https, "pass.example.com", backendCA.Pool(), "pass.example.com", "/", http.StatusOK, "secure")
	})

	t.Run("the backend's own TLS reaches the client", func(t *testing.T) {
		expectPassedThrough(t, https, backendCA.Pool(), backendPair)
	})
	t.Run("other names still terminate on the HTTPS listener", func(t *testing.T) {
		r, err := framework.GetTLSUnverified(https, "other.example.org", "other.example.org", "/")
		if err != nil || r.Status != http.StatusOK || r.Backend != "alpha" {
			t.Fatalf("HTTPS with SNI other.example.org: %v, %v; want 200 from alpha", r, err)
		}
		if err := sameCertificate(r.Certificate, fallback); err != nil {
			t.Error(err)
		}
	})
	// term's TLSRoute splits its connections between two plain TCP
	// backends, one to one.
	ping := func() (string, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", https,
			&tls.Config{ServerName: "term.example.net", RootCAs: ca.Pool()})
		if err != nil {
			return "", err
		}
		defer conn.Close()
		if err := sameCertificate(conn.ConnectionState().PeerCertificates[0], terminating); err != nil {
			return "", err
		}
		if p := conn.ConnectionState().NegotiatedProtocol; p != "" {
			return "", fmt.Errorf("ALPN %q negotiated where no HTTP runs", p)
		}
		if _, err := conn.Write([]byte("ping\n")); err != nil {
			return "", err
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return bufio.NewReader(conn).ReadString('\n')
	}
	t.Run("a Terminate listener ends TLS and sends the bytes within", func(t *testing.T) {
		var got string
		framework.Eventually(t, convergeTimeout, "term.example.net terminated", func() (err error) {
			got, err = ping()
			return err
		})
		// The backend echoes what it read: the client's bytes, not a
		// TLS record.
		if got != "echo: ping\n" && got != "other: ping\n" {
			t.Errorf("the backend answered %q, want %q or %q", got, "echo: ping\n", "other: ping\n")
		}
	})
	t.Run("a TLSRoute's weighted backends share its connections", func(t *testing.T) {
		// With weights one to one, 40 connections all to one backend
		// would come once in 2^39 runs.
		seen := map[string]int{}
		for range 40 {
			got, err := ping()
			if err != nil {
				t.Fatal(err)
			}
			seen[got]++
		}
		if seen["echo: ping\n"] == 0 || seen["other: ping\n"] == 0 || len(seen) != 2 {
			t.Errorf("answers over 40 connections: %v; want both backends', and only theirs", seen)
		}
	})
	t.Run("a TLSRoute without a backend closes its connections", func(t *testing.T) {
		err := tlsHandshake(https, "gone.example.com")
		if !connectionClosed(err) {
			t.Errorf("TLS handshake with SNI gone.example.com: %v; want the connection closed (EOF or reset)", err)
		}
	})
}

// tlsHandshake dials addr and shakes hands with sni, verifying nothing.
func tlsHandshake(addr, sni string) error {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: sni, InsecureSkipVerify: true}) //nolint:gosec // only whether a handshake happens
	if err == nil {
		conn.Close()
	}
	return err
}

// connectionClosed says the peer closed the connection during the
// handshake, as the conformance suite's rejection check reads it.
func connectionClosed(err error) bool {
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || strings.Contains(err.Error(), "connection reset by peer"))
}

// startTCPEcho serves plain TCP on loopback, answering each line it reads
// with its name, ": " and the line; it returns its port.
func startTCPEcho(t *testing.T, name string) int {
	t.Helper()
	return serveTCP(t, func(conn net.Conn) { // annotations_proxy_test.go
		r := bufio.NewReader(conn)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if _, err := conn.Write([]byte(name + ": " + line)); err != nil {
				return
			}
		}
	})
}

// gatewayTLSRouteYAML takes Envoy's HTTPS port three times.
const gatewayTLSRouteYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - name: passthrough
    port: %d
    protocol: TLS
    hostname: "*.example.com"
    tls: {mode: Passthrough}
  - name: https
    port: %d
    protocol: HTTPS
    tls: {certificateRefs: [{name: fallback-cert}]}
  - name: terminate
    port: %d
    protocol: TLS
    hostname: term.example.net
    tls: {mode: Terminate, certificateRefs: [{name: term-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: term, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: terminate}]
  rules:
  - backendRefs: [{name: plain-tcp, port: 80, weight: 1}, {name: other-tcp, port: 80, weight: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: pass, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: passthrough}]
  hostnames: [pass.example.com]
  rules:
  - backendRefs: [{name: secure, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: gone, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: passthrough}]
  hostnames: [gone.example.com]
  rules:
  - backendRefs: [{name: no-such-service, port: 443}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: fallback, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: https}]
  rules:
  - backendRefs: [{name: alpha, port: 80}]
`

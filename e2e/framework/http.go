package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
)

// Response is what a request through Envoy got back.
type Response struct {
	Status int
	// Backend names the echo backend that answered; empty when Envoy
	// answered itself (404, 503, ...).
	Backend string
	// Echo is the backend's reply, when a backend answered.
	Echo echo.Reply
	Body string
	// Header is the response's header (Location of a redirect, ...).
	Header http.Header
	// Certificate is the leaf certificate the server presented, over HTTPS.
	Certificate *x509.Certificate
}

func (r Response) String() string {
	if r.Backend != "" {
		return fmt.Sprintf("%d from backend %q (it saw host %q, path %q)", r.Status, r.Backend, r.Echo.Host, r.Echo.Path)
	}
	return fmt.Sprintf("%d from envoy: %q", r.Status, r.Body)
}

// newClient returns a client that never uses a proxy from the environment
// (traffic must stay on loopback) and never reuses a connection, so that
// every request sees the listener and routes as they are now.
func newClient() *http.Client {
	return &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: noRedirects,
	}
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Get sends GET path to address (host:port) with the given Host header, on a
// new connection.
func Get(address, host, path string) (Response, error) {
	return get(newClient(), "http", address, host, path)
}

// Expect sends a request and returns an error unless it got status from the
// backend named backend ("" for a response from Envoy itself). It is meant
// for Eventually and for one-shot checks alike.
func Expect(address, host, path string, status int, backend string) error {
	return expect(newClient(), "http", address, host, path, status, backend)
}

// get sends GET path to address over scheme (http or https) with the given
// Host header.
func get(client *http.Client, scheme, address, host, path string) (Response, error) {
	req, err := http.NewRequest(http.MethodGet, scheme+"://"+address+path, nil)
	if err != nil {
		return Response{}, err
	}
	req.Host = host
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("reading the response to %s%s: %w", host, path, err)
	}
	r := Response{Status: resp.StatusCode, Backend: resp.Header.Get("X-Backend"), Body: string(body), Header: resp.Header}
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.Certificate = resp.TLS.PeerCertificates[0]
	}
	if r.Backend != "" {
		if err := json.Unmarshal(body, &r.Echo); err != nil {
			return r, fmt.Errorf("backend %q sent a reply that is not echo's JSON: %w", r.Backend, err)
		}
	}
	return r, nil
}

func expect(client *http.Client, scheme, address, host, path string, status int, backend string) error {
	r, err := get(client, scheme, address, host, path)
	if err != nil {
		return err
	}
	if r.Status != status || r.Backend != backend {
		want := fmt.Sprintf("%d from backend %q", status, backend)
		if backend == "" {
			want = fmt.Sprintf("%d from envoy", status)
		}
		return fmt.Errorf("GET %s%s: got %s, want %s", host, path, r, want)
	}
	return nil
}

// Session sends every request over one kept-alive connection when it can,
// and counts the connections it had to open: a configuration change that
// closes client connections (a restart, a drained listener) shows as a
// second dial.
type Session struct {
	scheme  string // http or https
	address string
	client  *http.Client
	dials   atomic.Int64
}

// NewSession returns a Session to address (host:port).
func NewSession(address string) *Session {
	return newSession("http", address, nil)
}

func newSession(scheme, address string, tlsConfig *tls.Config) *Session {
	s := &Session{scheme: scheme, address: address}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	s.client = &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			Proxy:           nil,
			TLSClientConfig: tlsConfig,
			MaxConnsPerHost: 1,
			IdleConnTimeout: time.Minute,
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				s.dials.Add(1)
				return dialer.DialContext(ctx, network, addr)
			},
		},
		CheckRedirect: noRedirects,
	}
	return s
}

// Get is framework.Get on the session's connection.
func (s *Session) Get(host, path string) (Response, error) {
	return get(s.client, s.scheme, s.address, host, path)
}

// Expect is framework.Expect on the session's connection.
func (s *Session) Expect(host, path string, status int, backend string) error {
	return expect(s.client, s.scheme, s.address, host, path, status, backend)
}

// Dials is how many connections the session has opened.
func (s *Session) Dials() int64 { return s.dials.Load() }

// Close closes the session's idle connection.
func (s *Session) Close() { s.client.CloseIdleConnections() }

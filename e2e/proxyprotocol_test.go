package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// proxiedReply is what a client sending a PROXY protocol header saw: the
// status, the Location of a redirect, and the headers the backend got.
type proxiedReply struct {
	status   int
	location string
	header   http.Header
}

// proxiedGet opens a connection to address, sends the PROXY protocol v1
// header proxy (none when empty), then GET / for host, over TLS when
// tlsConfig is set, and reads the answer.
func proxiedGet(address, proxy, host string, tlsConfig *tls.Config) (proxiedReply, error) {
	return proxiedExchange(address, proxy, host, "", tlsConfig)
}

// proxiedHeaders is proxiedGet over plain HTTP with the request header
// lines headers ("Name: value\r\n" each).
func proxiedHeaders(address, proxy, host, headers string) (proxiedReply, error) {
	return proxiedExchange(address, proxy, host, headers, nil)
}

func proxiedExchange(address, proxy, host, headers string, tlsConfig *tls.Config) (proxiedReply, error) {
	conn, err := net.DialTimeout("tcp", address, 5*time.Second)
	if err != nil {
		return proxiedReply{}, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if proxy != "" {
		if _, err := io.WriteString(conn, proxy); err != nil {
			return proxiedReply{}, err
		}
	}
	var rw io.ReadWriter = conn
	if tlsConfig != nil {
		tc := tls.Client(conn, tlsConfig)
		if err := tc.Handshake(); err != nil {
			return proxiedReply{}, err
		}
		rw = tc
	}
	if _, err := fmt.Fprintf(rw, "GET / HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n", host, headers); err != nil {
		return proxiedReply{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(rw), nil)
	if err != nil {
		return proxiedReply{}, err
	}
	defer resp.Body.Close()
	r := proxiedReply{status: resp.StatusCode, location: resp.Header.Get("Location")}
	if resp.Header.Get("X-Backend") != "" {
		var reply echo.Reply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			return r, err
		}
		r.header = reply.Header
	}
	return r, nil
}

// proxiedH2C sends GET https://host/ over HTTP/2 without TLS (prior
// knowledge: :scheme https) after the PROXY header proxy, and returns the
// status and the X-Forwarded-Proto the backend saw.
func proxiedH2C(address, proxy, host string) (int, string, error) {
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, _ string, _ *tls.Config) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err == nil {
			_, err = io.WriteString(conn, proxy)
		}
		return conn, err
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}).Get("https://" + host + "/")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var reply echo.Reply
	if resp.Header.Get("X-Backend") != "" {
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			return 0, "", err
		}
	}
	return resp.StatusCode, reply.Header.Get("X-Forwarded-Proto"), nil
}

// TestProxyProtocol checks the ConfigMap's use-proxy-protocol through a
// real Envoy, as ingress-nginx's test/e2e/settings/proxy_protocol.go does
// through nginx: the PROXY header's source address is the client's
// (X-Forwarded-For), its destination port the backend's X-Forwarded-Port,
// a connection to 443 on the plain listener a client's HTTPS
// (X-Forwarded-Proto https: lua_ingress.lua's rewrite, which also keeps
// force-ssl-redirect from sending it back), and the HTTPS listener reads
// the header before TLS. A connection without the header gets no answer,
// as nginx closes one whose header is broken; a proxy-real-ip-cidr that
// leaves the peer out (nginx's set_real_ip_from) takes no connection of
// it.
func TestProxyProtocol(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "web", "web.example.com")
	forced := strings.Replace(hostIngressYAML("forced", "forced.example.com", "alpha", ""), "namespace: default\n",
		"namespace: default\n  annotations: {nginx.ingress.kubernetes.io/force-ssl-redirect: \"true\"}\n", 1)
	fm, configure := startConfigMapMode(t, map[string]string{"use-proxy-protocol": "true"},
		manifest{"services.yaml", echoServicesYAML(alpha) + tlsSecretYAML("web-cert", cert.CertPEM, cert.KeyPEM)},
		manifest{"ingresses.yaml", forwardedIngressYAML + "---\n" + hostIngressYAML("plain", "plain.example.com", "alpha", "") + "---\n" + forced})
	envoy := fm.envoy
	tlsConfig := &tls.Config{ServerName: "web.example.com", RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	header := func(port int) string { return fmt.Sprintf("PROXY TCP4 192.168.0.1 192.168.0.11 56324 %d\r\n", port) }
	// expect waits for the backend to see want (name: value) through a
	// PROXY header to port.
	expect := func(t *testing.T, address string, port int, host string, tc *tls.Config, want map[string]string) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, fmt.Sprintf("%s through a PROXY header to port %d", host, port), func() error {
			r, err := proxiedGet(address, header(port), host, tc)
			if err != nil {
				return err
			}
			if r.status != http.StatusOK || r.header == nil {
				return fmt.Errorf("status %d (Location %q), want 200 from the backend", r.status, r.location)
			}
			for name, value := range want {
				if got := strings.Join(r.header.Values(name), ", "); got != value {
					return fmt.Errorf("the backend saw %s %q, want %q", name, got, value)
				}
			}
			return nil
		})
	}

	// proxy_protocol.go "should respect port passed by the PROXY
	// Protocol".
	t.Run("port", func(t *testing.T) {
		expect(t, envoy.HTTPAddress, 1234, "plain.example.com", nil, map[string]string{
			"X-Forwarded-Port": "1234", "X-Forwarded-Proto": "http", "X-Forwarded-For": "192.168.0.1", "X-Real-Ip": "192.168.0.1"})
	})
	// "should respect proto passed by the PROXY Protocol server port":
	// lua_ingress.lua's rewrite makes pass_access_scheme https for
	// $proxy_protocol_server_port 443, so force-ssl-redirect does not
	// send the client back (redirect_to_https), which a connection to
	// another port still gets.
	t.Run("port 443 is HTTPS", func(t *testing.T) {
		expect(t, envoy.HTTPAddress, 443, "plain.example.com", nil, map[string]string{
			"X-Forwarded-Port": "443", "X-Forwarded-Proto": "https", "X-Scheme": "https", "X-Forwarded-For": "192.168.0.1"})
		expect(t, envoy.HTTPAddress, 443, "forced.example.com", nil, map[string]string{"X-Forwarded-Proto": "https"})
		r, err := proxiedGet(envoy.HTTPAddress, header(80), "forced.example.com", nil)
		if err != nil || r.status != http.StatusPermanentRedirect || r.location != "https://forced.example.com" {
			t.Errorf("force-ssl-redirect through a PROXY header to port 80: %+v, %v; want 308 to https://forced.example.com", r, err)
		}
		// The scheme is the port's, not the client's: an HTTP/2
		// client's :scheme https changes nothing.
		for _, host := range []string{"forced.example.com", "plain.example.com"} {
			status, proto, err := proxiedH2C(envoy.HTTPAddress, header(80), host)
			if err != nil || status != http.StatusPermanentRedirect && proto != "http" {
				t.Errorf("%s through a PROXY header to port 80, HTTP/2 with :scheme https: status %d, X-Forwarded-Proto %q, %v; want a 308 or http",
					host, status, proto, err)
			}
		}
	})
	// "should enable PROXY Protocol for HTTPS".
	t.Run("HTTPS", func(t *testing.T) {
		expect(t, envoy.HTTPSAddress, 1234, "web.example.com", tlsConfig, map[string]string{
			"X-Forwarded-Port": "1234", "X-Forwarded-Proto": "https", "X-Scheme": "https", "X-Forwarded-For": "192.168.0.1"})
	})
	t.Run("no PROXY header", func(t *testing.T) {
		if r, err := proxiedGet(envoy.HTTPAddress, "", "plain.example.com", nil); err == nil {
			t.Errorf("a request without the PROXY header was answered: %+v", r)
		}
	})
	// nginx believes the header of a peer in set_real_ip_from only; Envoy
	// takes no connection of another.
	t.Run("proxy-real-ip-cidr", func(t *testing.T) {
		configure(map[string]string{"use-proxy-protocol": "true", "proxy-real-ip-cidr": "10.0.0.0/8"})
		framework.Eventually(t, convergeTimeout, "no connection from 127.0.0.1", func() error {
			if r, err := proxiedGet(envoy.HTTPAddress, header(80), "plain.example.com", nil); err == nil {
				return fmt.Errorf("answered %d", r.status)
			}
			return nil
		})
		configure(map[string]string{"use-proxy-protocol": "true", "proxy-real-ip-cidr": "10.0.0.0/8,127.0.0.1"})
		expect(t, envoy.HTTPAddress, 80, "plain.example.com", nil, map[string]string{"X-Forwarded-For": "192.168.0.1"})
		expect(t, envoy.HTTPSAddress, 1234, "web.example.com", tlsConfig, map[string]string{"X-Forwarded-For": "192.168.0.1"})
	})
	// With use-forwarded-headers, nginx.tmpl reads X-Forwarded-For past
	// a trusted PROXY address ($forwarded_for_proxy_protocol), and
	// lua_ingress.lua lets the client's X-Forwarded-Proto stand but for
	// port 443, which is HTTPS whatever it says.
	t.Run("with use-forwarded-headers", func(t *testing.T) {
		configure(map[string]string{"use-proxy-protocol": "true", "use-forwarded-headers": "true"})
		framework.Eventually(t, convergeTimeout, "the forwarded headers trusted", func() error {
			r, err := proxiedHeaders(envoy.HTTPAddress, header(443), "forced.example.com", "X-Forwarded-Proto: http\r\nX-Forwarded-For: 1.2.3.4\r\n")
			switch {
			case err != nil:
				return err
			case r.status != http.StatusOK || r.header.Get("X-Forwarded-Proto") != "https" || r.header.Get("X-Forwarded-For") != "1.2.3.4":
				return fmt.Errorf("status %d, X-Forwarded-Proto %q, X-Forwarded-For %q; want 200, https, 1.2.3.4",
					r.status, r.header.Get("X-Forwarded-Proto"), r.header.Get("X-Forwarded-For"))
			}
			return nil
		})
		r, err := proxiedHeaders(envoy.HTTPAddress, header(80), "forced.example.com", "X-Forwarded-Proto: https\r\n")
		if err != nil || r.status != http.StatusOK || r.header.Get("X-Forwarded-Proto") != "https" {
			t.Errorf("PROXY header to port 80, X-Forwarded-Proto https: %+v, %v; want 200 (trusted)", r, err)
		}
		r, err = proxiedHeaders(envoy.HTTPAddress, header(80), "forced.example.com", "")
		if err != nil || r.status != http.StatusPermanentRedirect {
			t.Errorf("PROXY header to port 80, no X-Forwarded-Proto: %+v, %v; want 308", r, err)
		}
	})
	// proxy-protocol-header-timeout (ingress-nginx's template/configmap.go
	// reads it as a Go duration): a connection that sends no header is
	// closed once it has passed, on both listeners. Envoy's timer, not
	// the test's, decides when; Envoy's own 15 s would pass the read's
	// deadline, which guards against a hang.
	t.Run("proxy-protocol-header-timeout", func(t *testing.T) {
		configure(map[string]string{"use-proxy-protocol": "true", "proxy-protocol-header-timeout": "1s"})
		framework.Eventually(t, convergeTimeout, "the listeners' timeout applied", func() error {
			if n := strings.Count(envoy.ConfigDump(), `"listener_filters_timeout": "1s"`); n < 2 {
				return fmt.Errorf("%d listeners with listener_filters_timeout 1s, want 2", n)
			}
			return nil
		})
		for _, address := range []string{envoy.HTTPAddress, envoy.HTTPSAddress} {
			conn, err := net.DialTimeout("tcp", address, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
			if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("%s: a connection that sent no PROXY header: read %v, want it closed", address, err)
			}
		}
	})
	// Without the key, a PROXY header is no HTTP: 400.
	t.Run("unset", func(t *testing.T) {
		configure(nil)
		framework.Eventually(t, convergeTimeout, "plain HTTP again", func() error {
			r, err := proxiedGet(envoy.HTTPAddress, "", "plain.example.com", nil)
			if err == nil && r.status != http.StatusOK {
				err = fmt.Errorf("status %d", r.status)
			}
			return err
		})
	})
}

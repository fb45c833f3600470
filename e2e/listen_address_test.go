package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestListenAddressDualStack checks through a real Envoy serve's
// --listen-address :: (IPv4 and IPv6 clients on one socket, as
// ingress-nginx's nginx.tmpl listens on both port 80 and [::]:80 where
// its pod has IPv6) and the ConfigMap's disable-ipv6, which makes
// nginx.tmpl write no listen [::] (ingress-nginx's template.go,
// buildHTTPListener): each client reaches the backend, which is told
// the client's own address, an IPv4 client's as IPv4, not as an
// IPv4-mapped IPv6 address; with disable-ipv6 true an IPv6 client
// connects no more, and an IPv4 one still does.
func TestListenAddressDualStack(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("X-Real-IP"))
	}))
	t.Cleanup(backend.Close)
	b := serverBackend(t, "alpha", backend)
	fm := startFileModeWith(t, []string{"--listen-address", "::", "--configmap", "ingress-nginx/ingress-nginx-controller"},
		manifest{"services.yaml", readyServiceYAML("alpha", b)},
		manifest{"ingresses.yaml", strings.Replace(forwardedIngressYAML, "  tls: [{hosts: [web.example.com], secretName: web-cert}]\n", "", 1)},
		manifest{"configmap.yaml", controllerConfigMapYAML(map[string]string{"disable-ipv6": "false"})})
	t.Cleanup(func() {
		assertNoRejections(t, fm.envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	port := strconv.Itoa(fm.cp.HTTPPort)
	// realIP is the client address the backend is told of a request to
	// Envoy's address host.
	realIP := func(host string) (string, error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/", nil)
		if err != nil {
			return "", err
		}
		req.Host = "web.example.com"
		resp, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %d", resp.StatusCode)
		}
		return string(body), err
	}
	framework.Eventually(t, convergeTimeout, "IPv4 and IPv6 clients served", func() error {
		for _, client := range []string{"127.0.0.1", "::1"} {
			got, err := realIP(client)
			if err != nil {
				return fmt.Errorf("a client of %s: %w", client, err)
			}
			if got != client {
				return fmt.Errorf("a client of %s: the backend was told X-Real-IP %q", client, got)
			}
		}
		return nil
	})

	writeManifest(t, fm.dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"disable-ipv6": "true"}))
	framework.Eventually(t, convergeTimeout, "disable-ipv6: IPv4 clients alone", func() error {
		if got, err := realIP("::1"); err == nil {
			return fmt.Errorf("an IPv6 client served (the backend was told %q)", got)
		}
		if got, err := realIP("127.0.0.1"); err != nil || got != "127.0.0.1" {
			return fmt.Errorf("an IPv4 client: %q, %v", got, err)
		}
		return nil
	})
}

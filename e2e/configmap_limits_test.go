package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapClientLimits checks, through a real Envoy, the
// ConfigMap's bounds on a client connection that nginx.tmpl writes at http
// level: client-header-timeout (client_header_timeout: "If a client does
// not transmit the entire header within this time, the request is
// terminated with the 408 (Request Time-out) error", nginx's
// ngx_http_core_module documentation) and http2-max-concurrent-streams
// (http2_max_concurrent_streams, which nginx announces in its SETTINGS
// frame and enforces).
func TestControllerConfigMapClientLimits(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm, _ := startConfigMapMode(t, map[string]string{"client-header-timeout": "1", "http2-max-concurrent-streams": "7"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", hostIngressYAML("plain", "plain.example.com", "alpha", "")})
	envoy := fm.envoy
	framework.Eventually(t, convergeTimeout, "plain.example.com served", func() error {
		return envoy.Expect("plain.example.com", "/", http.StatusOK, "alpha")
	})

	t.Run("client-header-timeout", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", envoy.HTTPAddress, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Headers begun and never ended: Envoy's timer, not the test's,
		// decides when the answer comes; the deadline only guards
		// against a hang.
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: plain.example.com\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("headers never ended: %v, want a 408", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("headers never ended: %d, want 408", resp.StatusCode)
		}
	})

	t.Run("http2-max-concurrent-streams", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", envoy.HTTPAddress, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
			t.Fatal(err)
		}
		fr := http2.NewFramer(conn, conn)
		if err := fr.WriteSettings(); err != nil {
			t.Fatal(err)
		}
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		settings, ok := f.(*http2.SettingsFrame)
		if !ok {
			t.Fatalf("first frame %v, want SETTINGS", f)
		}
		if v, ok := settings.Value(http2.SettingMaxConcurrentStreams); !ok || v != 7 {
			t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d (sent: %v), want 7", v, ok)
		}
	})
}

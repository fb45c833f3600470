package pipeline

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// /healthz answers as soon as the process runs; /readyz only once the
// pipeline has published; /metrics serves the xDS server's metrics, with
// the Go runtime's, in Prometheus' text format.
func TestHealthReadinessAndMetrics(t *testing.T) {
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	srv := httptest.NewServer(Handler(HTTPOptions{Ready: tp.Ready, Metrics: tp.server.Gatherer()}))
	defer srv.Close()

	if code, body := get(t, srv, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	if code, _ := get(t, srv, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz before the first publish = %d, want 503", code)
	}
	tp.Rebuild(context.Background())
	if code, body := get(t, srv, "/readyz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/readyz after the first publish = %d %q, want 200 ok", code, body)
	}

	code, metrics := get(t, srv, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		"ingress_xds_snapshot_build_seconds_count 1",
		`ingress_xds_snapshot_publishes_total{result="changed"} 1`,
		`ingress_xds_snapshot_version_info{type="route",version="` + tp.version(resource.RouteType) + `"} 1`,
		`ingress_xds_snapshot_resources{type="endpoint"} 1`,
		`ingress_xds_nacks_total{protocol="sotw",type="listener"} 0`,
		"promhttp_metric_handler_errors_total{cause=\"gathering\"} 0",
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get(t, srv, "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("/debug/pprof/ without Profiles = %d, want 404", code)
	}
}

// Profiles adds Go's profiles beside the rest.
func TestProfiles(t *testing.T) {
	tp := newTestPipeline(t, state(false, "198.18.0.1"))
	srv := httptest.NewServer(Handler(HTTPOptions{Ready: tp.Ready, Metrics: tp.server.Gatherer(), Profiles: true}))
	defer srv.Close()
	if code, body := get(t, srv, "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("/debug/pprof/ = %d, want the profile index", code)
	}
	if code, _ := get(t, srv, "/debug/pprof/heap?debug=1"); code != http.StatusOK {
		t.Errorf("/debug/pprof/heap = %d", code)
	}
	if code, _ := get(t, srv, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with profiles = %d", code)
	}
}

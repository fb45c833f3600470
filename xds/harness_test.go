package xds

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// testServer is a Server serving on a loopback port for one test.
type testServer struct {
	*Server
	addr string
	logs *logBuffer
	stop func() // stops serving and waits; idempotent
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerAt(t, "127.0.0.1:0")
}

// startServerAt is startServer on address. A test that stops the server
// and serves again on its address gives a reserved port (freePort): a port
// of 127.0.0.1:0 goes back to the kernel's ephemeral pool when the first
// server closes it, and another process can be handed it before the second
// server binds it.
func startServerAt(t testing.TB, address string) *testServer {
	t.Helper()
	logs := &logBuffer{}
	s := NewServer(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	lis, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, s, lis, logs)
}

func serveOn(t testing.TB, s *Server, lis net.Listener, logs *logBuffer) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.ServeListener(ctx, lis) }()
	var once sync.Once
	ts := &testServer{Server: s, addr: lis.Addr().String(), logs: logs}
	ts.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-served; err != nil {
				t.Errorf("serving: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		ts.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

func (ts *testServer) publish(t testing.TB, f fixture) {
	t.Helper()
	if _, err := ts.Publish(context.Background(), f.resources(t)); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

func (ts *testServer) dial(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// counter reads one series of a counter or gauge vector from the metrics.
func (ts *testServer) counter(t testing.TB, name string, labels ...string) float64 {
	t.Helper()
	switch name {
	case "pushes":
		return testutil.ToFloat64(ts.metrics.pushes.WithLabelValues(labels...))
	case "pushed_resources":
		return testutil.ToFloat64(ts.metrics.pushedResources.WithLabelValues(labels...))
	case "acks":
		return testutil.ToFloat64(ts.metrics.acks.WithLabelValues(labels...))
	case "nacks":
		return testutil.ToFloat64(ts.metrics.nacks.WithLabelValues(labels...))
	case "connected":
		return testutil.ToFloat64(ts.metrics.connected.WithLabelValues(labels...))
	}
	t.Fatalf("no metric %q", name)
	return 0
}

// metricsEndpoints stands in for the process's /healthz, /readyz and
// /metrics, which internal/pipeline serves (it imports this package, so
// these tests cannot use it; its own tests cover those endpoints): the
// server's readiness and its metrics registry, in Prometheus' text format.
func metricsEndpoints(s *Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Ready() {
			http.Error(w, "not ready\n", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(s.Gatherer(), promhttp.HandlerOpts{}))
	return mux
}

// scrape returns what /metrics serves.
func (ts *testServer) scrape(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(metricsEndpoints(ts.Server))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// logBuffer collects log output safely from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log lines containing every one of the substrings.
func (b *logBuffer) lines(subs ...string) []string {
	var out []string
	for _, line := range strings.Split(b.String(), "\n") {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all && line != "" {
			out = append(out, line)
		}
	}
	return out
}

// eventually polls check until it returns nil. The timeout only bounds a
// hang; how long it took is never a pass or fail criterion.
func eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: still not true after 60s: %v", what, err)
}

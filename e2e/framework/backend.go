package framework

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
)

// Backend is an echo server in the test process, on 127.0.0.1, that names
// itself in every reply so a test can tell which backend a request reached.
type Backend struct {
	Name string
	Host string // always 127.0.0.1
	Port int

	requests atomic.Int64
}

// StartBackend starts an echo backend called name, stopped when the test ends.
func StartBackend(t testing.TB, name string) *Backend {
	t.Helper()
	b := &Backend{Name: name}
	handler := echo.Handler(name)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.requests.Add(1)
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("backend %s: %v", name, err)
	}
	b.Host = host
	b.Port, _ = strconv.Atoi(port)
	t.Logf("backend %s listening on %s", name, srv.Listener.Addr())
	return b
}

// Requests is how many requests the backend has answered.
func (b *Backend) Requests() int64 { return b.requests.Load() }

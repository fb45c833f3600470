package framework

import (
	"net"
	"strconv"
	"testing"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for
// processes that must be told their port up front (Envoy's listener comes
// from the control plane's flags, so it cannot be ":0").
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// LocalAddress returns "127.0.0.1:port".
func LocalAddress(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

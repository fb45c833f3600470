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

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a
// moment ago. FreePort called n times may return one port twice (the
// kernel hands a closed port out again), and two processes told the same
// port collide: every listener is held until all n are known.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free port: %v", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// LocalAddress returns "127.0.0.1:port".
func LocalAddress(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

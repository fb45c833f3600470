package framework

import (
	"net"
	"strconv"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/ports"
)

// FreePort returns a TCP port reserved for the test until it ends, for a
// process that must be told its port up front (Envoy's listener comes from
// the control plane's flags, so it cannot be ":0"), or for an address
// nothing may listen on. See FreePorts.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct TCP ports reserved for the test until it
// ends (e2e/ports): outside the kernel's ephemeral range, so no bind(0) or
// outgoing connection takes them, and recorded in a registry every test
// process of this repository shares, so no test running beside it, in this
// process or another, is handed them. Nothing listened on them when they
// were reserved.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	return ports.Take(t, n)
}

// LocalAddress returns "127.0.0.1:port".
func LocalAddress(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

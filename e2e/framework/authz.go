package framework

import (
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"
)

// StartAuthz runs `ingress-xds authz --listen address --metrics-address
// metricsAddress` (its request metrics' /metrics), with args after: the authorisation
// service that runs beside each Envoy in its pod and that Envoy calls over
// ext_authz (internal/authz). It waits until the service accepts
// connections, so that a test's first request does not race its start.
func StartAuthz(t testing.TB, address, metricsAddress string, args ...string) *Process {
	t.Helper()
	argv := append([]string{"authz", "--listen", address, "--metrics-address", metricsAddress, "--log-level", "debug"}, args...)
	p := StartProcess(t, "ingress-xds-authz", exec.Command(IngressXDS(t), argv...))
	Eventually(t, 30*time.Second, "ingress-xds authz listening on "+address, func() error {
		if err := p.Exited(); err != nil {
			return fmt.Errorf("ingress-xds authz exited: %w", err)
		}
		c, err := net.DialTimeout("tcp", address, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
	return p
}

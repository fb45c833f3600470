package framework

import (
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// ControlPlane is a running `ingress-xds serve`.
type ControlPlane struct {
	*Process
	XDSAddress     string // 127.0.0.1:port of the ADS server
	MetricsAddress string // 127.0.0.1:port of /healthz and /readyz
	HTTPPort       int    // the port Envoy's HTTP listener is told to bind
	HTTPSPort      int    // the port Envoy's HTTPS listener is told to bind
	// AuthzAddress is where the Envoys of this control plane call the
	// authorisation service, and Authz that service: one for them all,
	// as in a pod it is one per Envoy (every Envoy is told the same
	// address, and two could not listen on it here).
	AuthzAddress string
	// AuthzMetricsAddress is where that service serves the request
	// metrics (serve --request-metrics) on /metrics.
	AuthzMetricsAddress string
	Authz               *Process
	// TLS holds the certificates when xDS is served over mutual TLS: the
	// server half is what serve was given, the client half what Envoys and
	// test clients connect with. Nil for plaintext (--insecure).
	TLS *XDSCerts

	argv []string // to restart with the very same flags and ports
}

// StartControlPlane runs `ingress-xds serve --insecure` (xDS in plaintext)
// on free loopback ports, with args added (the source: --manifests DIR or
// --kubeconfig FILE, and any other flag). It does not wait for readiness:
// see Ready.
func StartControlPlane(t testing.TB, args ...string) *ControlPlane {
	t.Helper()
	return startControlPlane(t, nil, args)
}

// StartSecureControlPlane is StartControlPlane serving xDS over mutual TLS
// with the server half of certs.
func StartSecureControlPlane(t testing.TB, certs *XDSCerts, args ...string) *ControlPlane {
	t.Helper()
	return startControlPlane(t, certs, args)
}

func startControlPlane(t testing.TB, certs *XDSCerts, args []string) *ControlPlane {
	t.Helper()
	ports := FreePorts(t, 6)
	cp := &ControlPlane{
		XDSAddress:     LocalAddress(ports[0]),
		MetricsAddress: LocalAddress(ports[1]),
		HTTPPort:       ports[2],
		HTTPSPort:      ports[3],
		AuthzAddress:   LocalAddress(ports[4]),
		// The request metrics' /metrics of the authorisation service.
		AuthzMetricsAddress: LocalAddress(ports[5]),
		TLS:                 certs,
	}
	cp.argv = []string{"serve",
		"--xds-address", cp.XDSAddress,
		"--metrics-address", cp.MetricsAddress,
		"--http-port", strconv.Itoa(cp.HTTPPort),
		// Never the default 8443: parallel runs would fight over it.
		"--https-port", strconv.Itoa(cp.HTTPSPort),
		"--log-level", "debug",
		"--authz-address", cp.AuthzAddress,
		// A broken IR contract is logged and counted in every test.
		"--validate-ir",
	}
	if certs == nil {
		cp.argv = append(cp.argv, "--insecure")
	} else {
		s := certs.Server
		cp.argv = append(cp.argv, "--xds-tls-cert", s.Cert, "--xds-tls-key", s.Key, "--xds-tls-ca", s.CA)
	}
	cp.argv = append(append(cp.argv, vhdsServeArgs(args)...), args...) // vhds.go
	cp.Authz = StartAuthz(t, cp.AuthzAddress, cp.AuthzMetricsAddress)
	cp.Process = StartProcess(t, "ingress-xds", exec.Command(IngressXDS(t), cp.argv...))
	return cp
}

// Restart starts serve again with the same flags, on the same ports, once
// the previous process has exited (after Kill or Stop): the Envoys
// bootstrapped for it reconnect to the new one.
func (cp *ControlPlane) Restart(t testing.TB) {
	t.Helper()
	if cp.Exited() == nil {
		t.Fatalf("restarting ingress-xds (pid %d) while it still runs", cp.Pid())
	}
	cp.Process = StartProcess(t, "ingress-xds", exec.Command(IngressXDS(t), cp.argv...))
}

// Ready returns nil once /readyz answers 200, and otherwise says why not.
func (cp *ControlPlane) Ready() error {
	if err := cp.Exited(); err != nil {
		return fmt.Errorf("ingress-xds exited: %w", err)
	}
	resp, err := newClient().Get("http://" + cp.MetricsAddress + "/readyz")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %d %s", resp.StatusCode, body)
	}
	return nil
}

// WaitReady waits until /readyz answers 200.
func (cp *ControlPlane) WaitReady(t testing.TB) {
	t.Helper()
	Eventually(t, 30*time.Second, "ingress-xds /readyz", cp.Ready)
}

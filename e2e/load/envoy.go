package load

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// DefaultBootstrap is the command that writes the Envoy bootstrap when
// none is given: ingress-xds's own, on delta xDS unless --delta=false is
// added. Placeholders: {xds} (the control plane's xDS address), {admin}
// (Envoy's admin address), {node_id} and {out} (the file to write).
const DefaultBootstrap = "bin/ingress-xds bootstrap --xds-address {xds} --admin-address {admin} --node-id {node_id} --out {out}"

// envoyProc is a real Envoy bootstrapped to take its configuration from the
// control plane under test.
type envoyProc struct {
	*ControlPlane        // the process: Pid, Exited, Stop
	admin         string // 127.0.0.1:port of the admin interface
	listener      string // 127.0.0.1:port of the HTTP listener the control plane configures
	bootstrap     string // the bootstrap file
}

// envoyNodeID is the node id of the measured Envoy, as the control plane's
// logs name it.
const envoyNodeID = "ingress-load-envoy"

// startEnvoy writes a bootstrap with the bootstrap command template and
// starts the Envoy binary with it, its files and log in dir. httpPort is
// the port the control plane tells Envoy's HTTP listener to bind, adminPort
// that of its admin interface (both reserved: session.reservePort).
func startEnvoy(binary, bootstrapCmd, xds string, httpPort, adminPort, concurrency int, dir string) (*envoyProc, error) {
	e := &envoyProc{
		admin:    net.JoinHostPort("127.0.0.1", strconv.Itoa(adminPort)),
		listener: net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort)),
	}
	bootstrap := filepath.Join(dir, "envoy-bootstrap.json")
	e.bootstrap = bootstrap
	env, argv, err := expandTemplate(bootstrapCmd, []string{
		"{xds}", xds,
		"{admin}", e.admin,
		"{node_id}", envoyNodeID,
		"{out}", bootstrap,
	})
	if err != nil {
		return nil, fmt.Errorf("the bootstrap command: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(cmd.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("writing the Envoy bootstrap (%s): %w\n%s", strings.Join(argv, " "), err, out)
	}
	args := framework.EnvoyArgs(bootstrap, filepath.Join(dir, "envoy-base-id"))
	if concurrency > 0 {
		// Workers each hold every cluster (its load balancer and host
		// sets) unless the bootstrap defers that: memory grows with them.
		for i := range args[:len(args)-1] {
			if args[i] == "--concurrency" {
				args[i+1] = strconv.Itoa(concurrency)
			}
		}
	}
	e.ControlPlane, err = startProcess("envoy", nil, append([]string{binary}, args...), filepath.Join(dir, "envoy.log"))
	if err != nil {
		return nil, err
	}
	return e, nil
}

// waitReady waits until Envoy's admin /ready answers 200: it has its first
// listeners and clusters (and their load assignments) from the control
// plane.
func (e *envoyProc) waitReady(ctx context.Context) error {
	_, err := framework.Poll(ctx, 0, 50*time.Millisecond, func() error {
		if err := e.Exited(); err != nil {
			return framework.Permanent(err)
		}
		return framework.AdminReady(e.admin)
	})
	if err != nil {
		return fmt.Errorf("waiting for Envoy to be ready: %w (log: %s)", err, e.LogPath)
	}
	return nil
}

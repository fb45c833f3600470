package deploy

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestEnvoyProbeScripts runs the DaemonSet's readiness probe and preStop hook,
// as written in deploy/envoy.yaml, against a real Envoy bootstrapped by
// ingress-xds: the probe must pass once Envoy has its configuration and fail
// once it drains, and the hook must drain the listeners. Only the admin port
// (a free one rather than 9901) and the final sleep differ from the cluster.
func TestEnvoyProbeScripts(t *testing.T) {
	framework.Heavy(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the probe scripts need bash: %v", err)
	}
	m := load(t)
	envoy := container(t, m.envoy.Spec.Template.Spec, "envoy", false)
	readiness := script(t, "readiness probe", envoy.ReadinessProbe.Exec)
	preStop := script(t, "preStop", envoy.Lifecycle.PreStop.Exec)

	dir := t.TempDir()
	manifest := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: probe, namespace: default}
spec:
  defaultBackend: {service: {name: nothing, port: {number: 80}}}
`
	if err := os.WriteFile(filepath.Join(dir, "ingress.yaml"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	e := framework.StartEnvoy(t, cp) // returns once admin /ready says 200

	_, adminPort, err := net.SplitHostPort(e.AdminAddress)
	if err != nil {
		t.Fatal(err)
	}
	local := func(s string) string {
		if !strings.Contains(s, "/dev/tcp/127.0.0.1/9901") {
			t.Fatalf("script does not talk to the admin address 127.0.0.1:9901:\n%s", s)
		}
		return strings.ReplaceAll(s, "/dev/tcp/127.0.0.1/9901", "/dev/tcp/127.0.0.1/"+adminPort)
	}
	run := func(name, s string) error {
		out, err := exec.Command("bash", "-c", s).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", name, err, out)
		}
		return nil
	}
	if err := run("readiness probe", local(readiness)); err != nil {
		t.Fatalf("readiness probe fails against a ready Envoy: %v", err)
	}
	if _, err := net.DialTimeout("tcp", e.HTTPAddress, time.Second); err != nil {
		t.Fatalf("envoy's HTTP listener is not up before the drain: %v", err)
	}

	if !strings.Contains(preStop, "sleep 20") {
		t.Fatalf("preStop hook has no `sleep 20` to shorten:\n%s", preStop)
	}
	if err := run("preStop", strings.Replace(local(preStop), "sleep 20", "sleep 0", 1)); err != nil {
		t.Fatalf("preStop hook: %v", err)
	}
	// framework.StartEnvoy runs Envoy with --drain-time-s 1: after that the
	// drained listener is closed.
	framework.Eventually(t, 30*time.Second, "envoy's listener closed after the drain", func() error {
		conn, err := net.DialTimeout("tcp", e.HTTPAddress, time.Second)
		if err == nil {
			conn.Close()
			return fmt.Errorf("%s still accepts connections", e.HTTPAddress)
		}
		return nil
	})
	if err := run("readiness probe", local(readiness)); err == nil {
		t.Errorf("readiness probe still passes against a drained Envoy")
	}
	if e.Exited() != nil {
		t.Errorf("envoy exited on drain: %v", e.Exited())
	}
}

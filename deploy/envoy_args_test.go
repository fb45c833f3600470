package deploy

import (
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestEnvoyCommandLine runs the real Envoy with the DaemonSet's command and
// arguments, exactly as written in deploy/envoy.yaml, in validate mode on a
// bootstrap made by the init container's command (`ingress-xds bootstrap`
// with its arguments): Envoy must accept every option. Envoy's command line
// takes each value as the next argument and refuses --name=value, which
// the first run on a real cluster found (the pods crash-looped).
func TestEnvoyCommandLine(t *testing.T) {
	framework.Heavy(t)
	tools := framework.FindTools(t)
	m := load(t)
	spec := m.envoy.Spec.Template.Spec
	envoy := container(t, spec, "envoy", false)
	boot := container(t, spec, "bootstrap", true)
	if len(envoy.Command) != 1 || envoy.Command[0] != "envoy" {
		t.Fatalf("envoy command %q, want [envoy]", envoy.Command)
	}

	// The bootstrap as the init container writes it, to a file of ours,
	// with the pod's environment (POD_NAME, ENVOY_MEMORY_LIMIT, ...) given
	// values a pod could have.
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "envoy.json")
	// Validation reads the xDS client certificate the bootstrap names: the
	// Secret's files, here made by a CA of the test's, where the pod
	// mounts them.
	const mount = "/etc/envoy/xds-tls/"
	ca := framework.NewCA(t, "envoy command line test CA")
	client := ca.Issue(t, "envoy-test")
	for name, pem := range map[string][]byte{"tls.crt": client.CertPEM, "tls.key": client.KeyPEM, "ca.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})} {
		if err := os.WriteFile(filepath.Join(dir, name), pem, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for _, a := range boot.Args {
		a = strings.ReplaceAll(a, mount, dir+"/")
		a = strings.ReplaceAll(a, "$(POD_NAME)", "envoy-test")
		a = strings.ReplaceAll(a, "$(ENVOY_MEMORY_LIMIT)", "1073741824")
		if strings.HasPrefix(a, "--out=") {
			a = "--out=" + bootstrap
		}
		if strings.Contains(a, "$(") {
			t.Fatalf("bootstrap argument %q names an environment variable this test does not set", a)
		}
		args = append(args, a)
	}
	if out, err := exec.Command(framework.IngressXDS(t), args...).CombinedOutput(); err != nil {
		t.Fatalf("ingress-xds %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	i := slices.Index(envoy.Args, "/config/envoy.json")
	if i < 0 {
		t.Fatalf("envoy args %q do not name /config/envoy.json", envoy.Args)
	}
	run := slices.Clone(envoy.Args)
	run[i] = bootstrap
	run = append(run, "--mode", "validate")
	out, err := exec.Command(tools.Envoy, run...).CombinedOutput()
	if err != nil {
		t.Fatalf("envoy %s: %v\n%s", strings.Join(run, " "), err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("envoy --mode validate says:\n%s", out)
	}
}

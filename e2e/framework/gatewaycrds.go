package framework

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// GatewayAPICRDs is the directory of the standard channel's
// CustomResourceDefinitions in the sigs.k8s.io/gateway-api module go.mod
// requires, so that the CRDs a test installs are those of the very
// version the controller is built with. The module is in the module
// cache already: the controller imports it.
func GatewayAPICRDs(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("go", "list", "-m", "-json", "sigs.k8s.io/gateway-api")
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: %v", err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go list -m sigs.k8s.io/gateway-api: no module directory in %s (%v)", out, err)
	}
	dir := filepath.Join(mod.Dir, "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the standard channel's CRDs: %v", err)
	}
	return dir
}

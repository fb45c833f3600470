package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// modulePath identifies the repository's go.mod when walking up from the
// test's working directory.
const modulePath = "github.com/ingress-xds/ingress-xds"

// Heavy marks a test that needs real binaries (Envoy, kube-apiserver, etcd)
// and skips it under -short. It is the only reason these tests ever skip:
// missing tools are a failure, not a skip, so that a broken setup cannot
// pass for a green run.
func Heavy(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
}

// RepoRoot returns the directory holding the repository's go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := findRepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func findRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(firstLine(string(data)), modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", modulePath)
		}
		dir = parent
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Tools are the external binaries the end-to-end tests run.
type Tools struct {
	Dir string // $INGRESS_XDS_TOOLS, else <repo>/.tools
	// Envoy is the envoy binary.
	Envoy string
	// KubeAssets is a directory holding kube-apiserver and etcd, in the
	// layout envtest expects of KUBEBUILDER_ASSETS.
	KubeAssets string
}

// FindTools locates the tools and fails the test, saying how to get them,
// when one is missing.
func FindTools(t testing.TB) Tools {
	t.Helper()
	dir := os.Getenv("INGRESS_XDS_TOOLS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), ".tools")
	}
	kube := os.Getenv("KUBEBUILDER_ASSETS")
	if kube == "" {
		kube = filepath.Join(dir, "kube")
	}
	tools := Tools{Dir: dir, Envoy: filepath.Join(dir, "bin", "envoy"), KubeAssets: kube}
	var missing []error
	for _, bin := range []string{tools.Envoy, filepath.Join(kube, "kube-apiserver"), filepath.Join(kube, "etcd")} {
		if err := executable(bin); err != nil {
			missing = append(missing, err)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("end-to-end tools are missing; run `make tools` (or set INGRESS_XDS_TOOLS / KUBEBUILDER_ASSETS), or use -short to skip these tests:\n%v", errors.Join(missing...))
	}
	return tools
}

func executable(path string) error {
	info, err := os.Stat(path) // follows the symlinks make tools creates
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

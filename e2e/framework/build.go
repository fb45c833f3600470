package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Main runs the tests and then removes the binaries built for them. Use it as
// `func TestMain(m *testing.M) { os.Exit(framework.Main(m)) }`.
func Main(m *testing.M) int {
	code := m.Run()
	builds.removeAll()
	return code
}

// IngressXDS returns the path of an ingress-xds binary built from the working
// tree, or $INGRESS_XDS_BINARY when set (to test a release build, or to keep
// testing one build while the tree is being edited).
func IngressXDS(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("INGRESS_XDS_BINARY"); bin != "" {
		if err := executable(bin); err != nil {
			t.Fatalf("INGRESS_XDS_BINARY: %v", err)
		}
		return bin
	}
	return Build(t, "./cmd/ingress-xds")
}

// EchoBinary returns the path of the echo backend command, for backends that
// must run outside the test process (in another network namespace).
func EchoBinary(t testing.TB) string {
	t.Helper()
	return Build(t, "./e2e/cmd/echo")
}

// builds is the one piece of package state: a cache that makes each package
// be compiled once per test binary rather than once per test. Failures are
// cached too, so every test that needs a broken binary fails with the
// compiler's message instead of compiling again.
var builds buildCache

type buildCache struct {
	mu      sync.Mutex
	dir     string
	results map[string]buildResult
}

type buildResult struct {
	path string
	err  error
}

// Build compiles the main package pkg (relative to the repository root, e.g.
// "./cmd/ingress-xds") into a temporary directory and returns the binary.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	root := RepoRoot(t)
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if r, ok := builds.results[pkg]; ok {
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.path
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "ingress-xds-e2e-bin-")
		if err != nil {
			t.Fatalf("creating the build directory: %v", err)
		}
		builds.dir = dir
		builds.results = map[string]buildResult{}
	}
	start := time.Now()
	out := filepath.Join(builds.dir, path.Base(pkg))
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version=e2e", "-o", out, pkg)
	cmd.Dir = root
	r := buildResult{path: out}
	if output, err := cmd.CombinedOutput(); err != nil {
		r = buildResult{err: fmt.Errorf("go build %s: %v\n%s", pkg, err, output)}
	}
	builds.results[pkg] = r
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("built %s: took %s", pkg, time.Since(start).Round(time.Millisecond))
	return r.path
}

func (c *buildCache) removeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir != "" {
		os.RemoveAll(c.dir)
		c.dir, c.results = "", nil
	}
}

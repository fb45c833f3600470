package xds

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// toolPath finds a binary `make tools` installs. Under -short the test is
// skipped; otherwise a missing tool fails it, saying how to get it.
func toolPath(t testing.TB, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s; skipped with -short", name)
	}
	dir := os.Getenv("INGRESS_XDS_TOOLS")
	if dir == "" {
		dir = filepath.Join("..", ".tools")
	}
	path, err := filepath.Abs(filepath.Join(dir, "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("%s not found at %s: run `make tools` (or set INGRESS_XDS_TOOLS), or use -short to skip", name, path)
	}
	return path
}

// envoy is a real Envoy bootstrapped by Bootstrap to take everything from a
// test's Server.
type envoy struct {
	t      testing.TB
	nodeID string
	admin  string
	cmd    *exec.Cmd
	out    *logBuffer
}

// startEnvoy starts Envoy against xdsAddr. edit, when set, changes the
// bootstrap first (a test adds a static listener this way).
func startEnvoy(t testing.TB, xdsAddr, nodeID string, delta bool, edit func(*bootstrapv3.Bootstrap)) *envoy {
	t.Helper()
	bin := toolPath(t, "envoy")
	dir := t.TempDir()
	e := &envoy{t: t, nodeID: nodeID, admin: localAddr(freePort(t)), out: &logBuffer{}}
	b, err := Bootstrap(BootstrapOptions{XDSAddress: xdsAddr, NodeID: nodeID, AdminAddress: e.admin, Delta: delta})
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(b)
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "bootstrap.json")
	if err := os.WriteFile(config, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e.cmd = exec.Command(bin, "--config-path", config,
		// Envoys of parallel tests and of other people's runs must not share
		// hot-restart memory: each picks a free base id.
		"--use-dynamic-base-id", "--base-id-path", filepath.Join(dir, "base-id"),
		"--concurrency", "1", "--drain-time-s", "1", "--log-level", "info")
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.out
	if err := e.cmd.Start(); err != nil {
		t.Fatalf("starting envoy: %v", err)
	}
	exited := make(chan struct{})
	go func() { e.cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		e.cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("envoy %s log (last 60 lines):\n%s", nodeID, tail(e.out.String(), 60))
		}
	})
	eventually(t, "envoy "+nodeID+" ready", func() error {
		select {
		case <-exited:
			return fmt.Errorf("envoy exited: %s", tail(e.out.String(), 20))
		default:
		}
		status, body, err := e.get("/ready")
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("/ready: %d %s", status, strings.TrimSpace(body))
		}
		return nil
	})
	return e
}

func (e *envoy) get(path string) (int, string, error) {
	resp, err := http.Get("http://" + e.admin + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// stat reads one counter or gauge; a stat Envoy has not created yet is 0.
// Some gauges are hashes, hence unsigned.
func (e *envoy) stat(name string) uint64 {
	e.t.Helper()
	_, body, err := e.get("/stats?filter=" + "^" + regexp.QuoteMeta(name) + "$")
	if err != nil {
		e.t.Fatalf("reading stat %s: %v", name, err)
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ": ")
		if ok && k == name {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				e.t.Fatalf("stat %s = %q: %v", name, v, err)
			}
			return n
		}
	}
	return 0
}

// through sends a request through Envoy's listener on port and returns the
// status and body.
func through(port int, path string) (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// backend is an HTTP server that answers every request with its name.
func backend(t testing.TB, name string) string {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, name)
	})}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

// expectBackend waits until a request for path through Envoy reaches want.
func expectBackend(t testing.TB, port int, path, want string) {
	t.Helper()
	eventually(t, fmt.Sprintf("GET %s through envoy reaches %s", path, want), func() error {
		status, body, err := through(port, path)
		if err != nil {
			return err
		}
		if status != http.StatusOK || body != want {
			return fmt.Errorf("got %d %q", status, body)
		}
		return nil
	})
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

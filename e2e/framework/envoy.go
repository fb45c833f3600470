package framework

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Envoy is a real Envoy bootstrapped by `ingress-xds bootstrap` to take all
// of its configuration from a ControlPlane.
type Envoy struct {
	*Process
	AdminAddress string // 127.0.0.1:port of the admin interface
	HTTPAddress  string // 127.0.0.1:port of the HTTP listener the control plane configures
	// HTTPSAddress is 127.0.0.1:port of the HTTPS listener, which exists
	// only while some host has a valid certificate.
	HTTPSAddress string
	// NodeID is the node id of the bootstrap, as the control plane's CSDS
	// and logs name this Envoy.
	NodeID string
}

// StartEnvoy writes a bootstrap for cp with `ingress-xds bootstrap`, starts
// Envoy with it and waits until Envoy reports itself ready, that is, until
// it has its first listeners and clusters from cp. Against a control plane
// serving mutual TLS, Envoy connects with cp's client certificate.
func StartEnvoy(t testing.TB, cp *ControlPlane) *Envoy {
	t.Helper()
	return StartEnvoyWith(t, cp, EnvoyOptions{})
}

// EnvoyOptions vary how StartEnvoyWith bootstraps Envoy.
type EnvoyOptions struct {
	// TLS replaces the client files Envoy connects with (cp's by default).
	TLS *TLSFiles
	// Plaintext bootstraps without TLS, whatever cp serves.
	Plaintext bool
	// ServerName is the name Envoy verifies in the server's certificate
	// (bootstrap's default, the host of the xDS address, when empty).
	ServerName string
	// NoWait returns once Envoy has started, without waiting for it to be
	// ready: for an Envoy that must not get a configuration, or whose
	// start the test times itself.
	NoWait bool
	// SotW bootstraps Envoy with state-of-the-world xDS (bootstrap
	// --delta=false) rather than delta, bootstrap's default; the SotW
	// suite sets it always (sotw.go).
	SotW bool
	// Delta keeps delta xDS in the SotW suite too, for a test of what
	// only delta does (VHDS, on-demand clusters) or of both protocols.
	Delta bool
}

// StartEnvoyWith is StartEnvoy with options.
func StartEnvoyWith(t testing.TB, cp *ControlPlane, o EnvoyOptions) *Envoy {
	t.Helper()
	tools := FindTools(t)
	dir := t.TempDir()
	bootstrap := filepath.Join(dir, "bootstrap.json")
	e := &Envoy{
		AdminAddress: LocalAddress(FreePort(t)),
		HTTPAddress:  LocalAddress(cp.HTTPPort),
		HTTPSAddress: LocalAddress(cp.HTTPSPort),
		NodeID:       nodeID(t),
	}
	args := []string{"bootstrap",
		"--xds-address", cp.XDSAddress,
		"--admin-address", e.AdminAddress,
		"--node-id", e.NodeID,
		"--out", bootstrap,
	}
	if o.SotW || SotW() && !o.Delta { // sotw.go
		args = append(args, "--delta=false")
	}
	files := o.TLS
	if files == nil && cp.TLS != nil {
		files = &cp.TLS.Client
	}
	if files != nil && !o.Plaintext {
		args = append(args, "--xds-tls-cert", files.Cert, "--xds-tls-key", files.Key, "--xds-tls-ca", files.CA)
		if o.ServerName != "" {
			args = append(args, "--xds-server-name", o.ServerName)
		}
	}
	out, err := exec.Command(IngressXDS(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ingress-xds bootstrap: %v\n%s", err, out)
	}
	e.Process = StartProcess(t, "envoy", exec.Command(tools.Envoy, EnvoyArgs(bootstrap, filepath.Join(dir, "base-id"))...))
	if !o.NoWait {
		Eventually(t, 60*time.Second, "envoy admin /ready", e.Ready)
	}
	return e
}

// EnvoyArgs are the flags of every Envoy the tests and the load command
// run: the bootstrap file, and where it writes its hot-restart base id.
func EnvoyArgs(bootstrap, baseIDPath string) []string {
	return []string{
		"--config-path", bootstrap,
		// Parallel Envoys (other tests, other people's runs) must not
		// share hot-restart shared memory: let each pick a free base id.
		"--use-dynamic-base-id", "--base-id-path", baseIDPath,
		"--concurrency", "1", // the machines running this are small
		"--drain-time-s", "1",
		// As the DaemonSet's: the access log within a second.
		"--file-flush-interval-msec", "1000",
		"--log-level", "info",
	}
}

// nodeID names the Envoy after its test, so that the control plane's logs
// say which test a stream belongs to.
func nodeID(t testing.TB) string {
	return "e2e-" + regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "-")
}

// Ready returns nil once Envoy's admin /ready answers 200 (server state LIVE).
func (e *Envoy) Ready() error {
	if err := e.Exited(); err != nil {
		return fmt.Errorf("envoy exited: %w", err)
	}
	return AdminReady(e.AdminAddress)
}

// AdminReady returns nil once the admin /ready of the Envoy whose admin
// interface is at adminAddress answers 200: it has its first listeners and
// clusters (and their load assignments) from its control plane.
func AdminReady(adminAddress string) error {
	status, body, err := adminGet(adminAddress, "/ready")
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("envoy /ready: %d %s", status, strings.TrimSpace(body))
	}
	return nil
}

// Get sends GET path with the given Host header to Envoy's HTTP listener.
func (e *Envoy) Get(host, path string) (Response, error) {
	return Get(e.HTTPAddress, host, path)
}

// Expect is framework.Expect against this Envoy's HTTP listener.
func (e *Envoy) Expect(host, path string, status int, backend string) error {
	return Expect(e.HTTPAddress, host, path, status, backend)
}

// NewSession returns a Session to Envoy's HTTP listener, for checks that the
// client's connection survives a change.
func (e *Envoy) NewSession() *Session {
	return NewSession(e.HTTPAddress)
}

// Stat returns the value of the counter or gauge called name, from the admin
// /stats endpoint. A stat Envoy does not have is an error, never a zero: a
// misspelt name must not make a check pass.
func (e *Envoy) Stat(name string) (int64, error) {
	status, body, err := e.admin("/stats?filter=" + url.QueryEscape("^"+regexp.QuoteMeta(name)+"$"))
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("envoy /stats: %d %s", status, body)
	}
	scanner := bufio.NewScanner(strings.NewReader(body))
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ": ")
		if ok && key == name {
			return strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		}
	}
	return 0, fmt.Errorf("envoy has no stat %q", name)
}

// Stats returns every counter and gauge whose name matches the regular
// expression re (RE2, as Envoy's admin /stats?filter= takes it).
func (e *Envoy) Stats(re string) (map[string]int64, error) {
	status, body, err := e.admin("/stats?filter=" + url.QueryEscape(re))
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("envoy /stats: %d %s", status, body)
	}
	stats := map[string]int64{}
	scanner := bufio.NewScanner(strings.NewReader(body))
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ": ")
		if !ok {
			continue
		}
		// Histograms print summaries, not integers: not what this returns.
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil {
			stats[key] = n
		}
	}
	return stats, scanner.Err()
}

// ConfigDump returns the admin /config_dump, for failure reports.
func (e *Envoy) ConfigDump() string {
	_, body, err := e.admin("/config_dump")
	if err != nil {
		return err.Error()
	}
	return body
}

// Admin GETs a path of Envoy's admin interface.
func (e *Envoy) Admin(path string) (int, string, error) { return e.admin(path) }

func (e *Envoy) admin(path string) (int, string, error) {
	return adminGet(e.AdminAddress, path)
}

func adminGet(adminAddress, path string) (int, string, error) {
	resp, err := newClient().Get("http://" + adminAddress + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

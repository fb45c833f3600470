package load

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

func TestMain(m *testing.M) { os.Exit(framework.Main(m)) }

// The Envoy phase end to end at a tiny scale: a real API server, the real
// ingress-xds, a real Envoy and the backend in its network namespace. Each
// new Ingress must be served by the backend through Envoy exactly once
// (polling stops at the first 200), Envoy must accept every update, and the
// namespace must be gone afterwards. Timings are printed, never asserted.
func TestEnvoyPhase(t *testing.T) {
	framework.Heavy(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace (ip netns)")
	}
	tools := framework.FindTools(t)
	bin := framework.IngressXDS(t)
	for _, delta := range []bool{false, true} {
		t.Run(protocol(delta), func(t *testing.T) {
			bootstrap := strings.Replace(DefaultBootstrap, "bin/ingress-xds", bin, 1)
			if delta {
				bootstrap += " --delta"
			}
			before := loadNamespaces(t)
			cfg := Config{
				Workload:      Workload{N: 3, Namespace: "load", Headless: true},
				KubeAssets:    tools.KubeAssets,
				Command:       bin + " serve --insecure --kubeconfig {kubeconfig} --xds-address {xds} --http-port {http_port} --https-port 0 --metrics-address 127.0.0.1:0 --status-address 192.0.2.1",
				Delta:         delta,
				Changes:       1,
				Interval:      50 * time.Millisecond,
				CreateWorkers: 4,
				Timeout:       time.Minute,
				Dir:           t.TempDir(),
				EnvoyChanges:  3,
				EnvoyBinary:   tools.Envoy,
				Bootstrap:     bootstrap,
				EnvoyPoll:     2 * time.Millisecond,
				Log:           slog.New(slog.NewTextHandler(testWriter{t}, nil)),
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var table strings.Builder
			res.WriteTable(&table)
			t.Logf("result:\n%s", table.String())

			e := res.Envoy
			if e == nil {
				t.Fatal("no Envoy result")
			}
			if e.Protocol != protocol(delta) {
				t.Errorf("Envoy's bootstrap speaks %q, want %q", e.Protocol, protocol(delta))
			}
			if e.Served.Count != 3 || e.API.Count != 3 {
				t.Errorf("%d changes served, %d created; want 3 and 3", e.Served.Count, e.API.Count)
			}
			// The warm-up Ingress and each change: one 200 each.
			if e.BackendRequests != 4 {
				t.Errorf("the backend answered %d requests, want 4 (one per Ingress)", e.BackendRequests)
			}
			if e.Rejected != 0 || res.Rejected != 0 {
				t.Errorf("Envoy rejected %d updates, the ADS client %d responses; want none", e.Rejected, res.Rejected)
			}
			if e.PeakRSSBytes == 0 {
				t.Error("no Envoy memory figure")
			}
			if after := loadNamespaces(t); len(after) > len(before) {
				t.Errorf("network namespaces left behind: before %v, after %v", before, after)
			}
		})
	}
}

// loadNamespaces lists the network namespaces the Envoy phase creates.
func loadNamespaces(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/var/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "ixds-load-") {
			out = append(out, e.Name())
		}
	}
	return out
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// The Envoy phase is refused up front when the control plane cannot be told
// Envoy's port, rather than failing after the workload is created.
func TestValidateEnvoyPhase(t *testing.T) {
	cfg := Config{
		Workload:     Workload{N: 1, Namespace: "load"},
		KubeAssets:   "/assets",
		Command:      "serve --xds-address {xds}",
		EnvoyChanges: 1,
		EnvoyBinary:  "envoy",
		Bootstrap:    DefaultBootstrap,
		EnvoyPoll:    time.Millisecond,
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "{http_port}") {
		t.Errorf("Validate without {http_port}: %v, want an error naming it", err)
	}
	cfg.Command += " --http-port {http_port}"
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	cfg.EnvoyBinary = ""
	if err := cfg.Validate(); err == nil {
		t.Error("Validate without an Envoy binary: no error")
	}
	cfg.EnvoyChanges, cfg.Command = 0, "serve" // no Envoy phase: nothing of it is needed
	if err := cfg.Validate(); err != nil {
		t.Errorf("Validate without the Envoy phase: %v", err)
	}
}

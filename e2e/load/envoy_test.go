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
			if !delta {
				bootstrap += " --delta=false"
			}
			before := loadNamespaces(t)
			cfg := Config{
				Workload:         Workload{N: 3, Namespace: "load", Headless: true},
				KubeAssets:       tools.KubeAssets,
				Command:          bin + " serve --insecure --kubeconfig {kubeconfig} --xds-address {xds} --http-port {http_port} --https-port 0 --metrics-address 127.0.0.1:0 --status-address 192.0.2.1",
				Delta:            delta,
				OnDemandClusters: delta,
				Changes:          1,
				Interval:         50 * time.Millisecond,
				CreateWorkers:    4,
				Timeout:          time.Minute,
				Dir:              t.TempDir(),
				EnvoyChanges:     3,
				EnvoyBinary:      tools.Envoy,
				Bootstrap:        bootstrap,
				EnvoyPoll:        2 * time.Millisecond,
				EnvoyKinds:       AllKinds,
				EnvoyInterval:    50 * time.Millisecond,
				EnvoyProfile:     true,
				Log:              slog.New(slog.NewTextHandler(testWriter{t}, nil)),
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
			if len(e.Kinds) != len(AllKinds) {
				t.Fatalf("%d kinds of change measured, want %d", len(e.Kinds), len(AllKinds))
			}
			for i, k := range e.Kinds {
				if k.Kind != AllKinds[i] || k.Served.Count != 3 || k.API.Count != 3 || k.BytesToEnvoy.Count != 3 {
					t.Errorf("kind %d: %s with %d served, %d API, %d byte counts; want %s with 3 each", i, k.Kind, k.Served.Count, k.API.Count, k.BytesToEnvoy.Count, AllKinds[i])
				}
			}
			// Every change sends Envoy something: a change that took no
			// bytes was served from what Envoy had, and measured nothing.
			for _, sm := range e.Samples {
				if sm.BytesToEnvoy <= 0 {
					t.Errorf("change %s at %s: %d bytes to Envoy", sm.Kind, sm.Created, sm.BytesToEnvoy)
				}
			}
			// The backends answer each warm-up, each change's 200, and
			// every 200 of the other backend while a shift was pending.
			others := 0
			for answer, n := range e.AnswersBeforeServed {
				if strings.HasPrefix(answer, "200 from ") {
					others += n
				}
			}
			if want := int64(len(AllKinds) + 3*len(AllKinds) + others); e.BackendRequests != want {
				t.Errorf("the backends answered %d requests, want %d (one per warm-up and change, %d from the other backend)", e.BackendRequests, want, others)
			}
			if e.XDSConnections != 1 {
				t.Errorf("Envoy opened %d xDS connections, want 1", e.XDSConnections)
			}
			// Envoy applied updates of routes and endpoints during the
			// changes, and the profile read what it holds.
			// A delta Envoy takes its routes' changes over VHDS (serve
			// --delta-vhds), a SotW one over RDS.
			routes := map[bool]string{false: "rds", true: "vhds"}[delta]
			for _, typ := range []string{routes, "eds", "cds"} {
				if e.Updates[typ].Success <= e.UpdatesAtReady[typ].Success {
					t.Errorf("Envoy's %s updates: %d at ready, %d after the changes; want more after", typ, e.UpdatesAtReady[typ].Success, e.Updates[typ].Success)
				}
			}
			if m := e.Memory; m.Stats == 0 || m.Clusters == 0 || m.ConfigDumpBytes == 0 || m.AllocatedBytes == 0 || m.SettledRSSBytes == 0 {
				t.Errorf("Envoy's memory profile is missing figures: %+v", m)
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
		EnvoyKinds:   AllKinds,
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

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/load"
)

// TestTablesAreTheRunsReport keeps docs/benchmarks.md's current tables
// what make bench-report renders from the runs kept beside them: a table
// edited by hand, or runs added without the tables made again, fails.
func TestTablesAreTheRunsReport(t *testing.T) {
	runs, err := filepath.Glob("../../docs/benchmark-runs/*.json")
	if err != nil || len(runs) == 0 {
		t.Fatalf("no runs in docs/benchmark-runs: %v", err)
	}
	doc, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(copyPath, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-ref", "../../docs/benchmarks-reference.json", "-write", copyPath}, runs...)
	if err := run(args); err != nil {
		t.Fatal(err)
	}
	rendered, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rendered, doc) {
		t.Errorf("docs/benchmarks.md's tables are not what make bench-report renders from docs/benchmark-runs; run it:\n%s", firstDifference(doc, rendered))
	}
}

// firstDifference shows the lines around where two texts part.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := bytes.LastIndexByte(a[:i], '\n') + 1
	end := func(s []byte) int { return min(len(s), start+300) }
	return "docs:     " + string(a[start:end(a)]) + "\nrendered: " + string(b[start:end(b)])
}

// TestKeepReplacesTheRunsOfTheKindsGiven: -keep writes the runs given,
// their change samples kept and the fan-out's per-client ones left out;
// a kept run of a kind given (scale, protocol, fan-out clients) is
// removed, and one of another kind stays and is rendered: making one
// scale's runs again must not take another scale's table out of the
// docs.
func TestKeepReplacesTheRunsOfTheKindsGiven(t *testing.T) {
	in, kept := t.TempDir(), t.TempDir()
	write := func(path string, r load.Result) {
		t.Helper()
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(kept, "100-delta-3-1.json"), load.Result{N: 100, Protocol: "delta", Fanout: &load.Fanout{Clients: 3}})
	write(filepath.Join(kept, "10000-sotw-3-1.json"), load.Result{N: 10000, Protocol: "sotw", Command: "serve", Fanout: &load.Fanout{Clients: 3}})
	res := load.Result{N: 100, Services: 1000, Protocol: "delta", Command: "serve", Files: []string{"/tmp/x/control-plane.log"},
		EndpointChange: load.Summary{Count: 2, P50: 10, Samples: []float64{10, 12}},
		Fanout: &load.Fanout{Clients: 3, Arrival: load.Summary{Count: 3, P99: 30, Samples: []float64{10, 20, 30}},
			IngressArrival: &load.Summary{Count: 3, Samples: []float64{1, 2, 3}},
			Reconnect:      &load.Reconnect{Seconds: 1, Back: load.Summary{Count: 3, Samples: []float64{4, 5, 6}}}}}
	path := filepath.Join(in, "load-100-delta.json")
	write(path, res)
	doc := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := os.WriteFile(doc, []byte(beginMarker+endMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-ref", "../../docs/benchmarks-reference.json", "-keep", kept, "-write", doc, path}); err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob(filepath.Join(kept, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	if want := []string{"10000-sotw-3-1.json", "load-100-delta.json"}; !slices.Equal(names, want) {
		t.Fatalf("kept %v, want %v", names, want)
	}
	var got load.Result
	if err := readJSON(filepath.Join(kept, "load-100-delta.json"), &got); err != nil {
		t.Fatal(err)
	}
	f := got.Fanout
	if f == nil || f.Arrival.P99 != 30 || f.Arrival.Samples != nil || f.IngressArrival.Samples != nil || f.Reconnect.Back.Samples != nil {
		t.Errorf("kept fan-out %+v: want its summaries without per-client samples", f)
	}
	if len(got.EndpointChange.Samples) != 2 || got.Files != nil {
		t.Errorf("kept change samples %v and files %v: want the samples, no files", got.EndpointChange.Samples, got.Files)
	}
	rendered, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"**100 Ingresses**", "**10,000 Ingresses**"} {
		if !bytes.Contains(rendered, []byte(table)) {
			t.Errorf("rendered tables lack %s:\n%s", table, rendered)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
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

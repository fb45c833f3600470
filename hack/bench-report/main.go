// Command bench-report renders the current tables of docs/benchmarks.md
// from the load command's JSON results: one table per scale, with the
// targets and the peers' figures of docs/benchmarks-reference.json beside
// ours. With -write it replaces the part of the file between its
// bench-report markers; otherwise it prints the tables. With -keep the
// runs given replace, in a directory, the runs kept there of their kinds
// (scale, protocol, fan-out clients), and the tables are made from all it
// then holds: runs of one scale made again leave the other scales' tables
// as they were.
//
//	go run ./hack/bench-report -keep docs/benchmark-runs -write docs/benchmarks.md bin/bench/*.json
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ingress-xds/ingress-xds/e2e/load"
)

const (
	beginMarker = "<!-- bench-report: begin (make bench-report writes what follows) -->\n"
	endMarker   = "<!-- bench-report: end -->\n"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench-report:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("bench-report", flag.ContinueOnError)
	refPath := fs.String("ref", "docs/benchmarks-reference.json", "targets and peers' figures per scale")
	write := fs.String("write", "", "replace the tables between the bench-report markers of this file (default: print them)")
	keep := fs.String("keep", "", "directory of kept runs: the runs given replace those of their kinds (scale, protocol, fan-out clients) there, without per-client samples, and the tables are made from all it then holds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no result given: the load command's -json files")
	}
	var ref load.Reference
	if err := readJSON(*refPath, &ref); err != nil {
		return err
	}
	paths := fs.Args()
	runs := make([]load.Result, len(paths))
	for i, path := range paths {
		if err := readJSON(path, &runs[i]); err != nil {
			return err
		}
	}
	if *keep != "" {
		var err error
		if paths, runs, err = withKeptRuns(*keep, paths, runs); err != nil {
			return err
		}
		if err := keepRuns(*keep, paths, runs); err != nil {
			return err
		}
	}
	tables := load.Report(runs, ref)
	if *write == "" {
		_, err := fmt.Print(tables)
		return err
	}
	return replaceBetweenMarkers(*write, tables)
}

// withKeptRuns adds to the runs given those kept in dir of a kind none of
// them is of (load.SameKind). A run given from dir is among them already.
func withKeptRuns(dir string, paths []string, runs []load.Result) ([]string, []load.Result, error) {
	kept, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	given := len(runs)
	for _, path := range kept {
		var r load.Result
		if err := readJSON(path, &r); err != nil {
			return nil, nil, err
		}
		if !slices.ContainsFunc(runs[:given], func(g load.Result) bool { return load.SameKind(g, r) }) {
			paths, runs = append(paths, path), append(runs, r)
		}
	}
	return paths, runs, nil
}

// keepRuns writes each run to dir under its file's name, without the
// fan-out's per-client samples (thousands a run; the tables read their
// summaries) or the names of files its machine kept, and removes the
// runs dir held that are not among them.
func keepRuns(dir string, paths []string, runs []load.Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, path := range paths {
		if kept[filepath.Base(path)] {
			return fmt.Errorf("%s: two runs to keep are named %s", path, filepath.Base(path))
		}
		kept[filepath.Base(path)] = true
	}
	for i, path := range paths {
		r := runs[i]
		r.Files = nil
		if f := r.Fanout; f != nil {
			stripped := *f
			stripped.Arrival.Samples = nil
			if a := f.IngressArrival; a != nil {
				ia := *a
				ia.Samples = nil
				stripped.IngressArrival = &ia
			}
			if st := f.Reconnect; st != nil {
				back := *st
				back.Back.Samples = nil
				stripped.Reconnect = &back
			}
			r.Fanout = &stripped
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding %s: %w", path, err)
		}
		name := filepath.Base(path)
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	for _, path := range old {
		if !kept[filepath.Base(path)] {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}

func replaceBetweenMarkers(path, tables string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	begin := bytes.Index(data, []byte(beginMarker))
	end := bytes.Index(data, []byte(endMarker))
	if begin < 0 || end < begin {
		return fmt.Errorf("%s has no bench-report markers (%q, then %q)", path, beginMarker, endMarker)
	}
	var out bytes.Buffer
	out.Write(data[:begin+len(beginMarker)])
	out.WriteString("\n" + tables + "\n")
	out.Write(data[end:])
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

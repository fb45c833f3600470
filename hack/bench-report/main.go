// Command bench-report renders the current tables of docs/benchmarks.md
// from the load command's JSON results: one table per scale, with the
// targets and the peers' figures of docs/benchmarks-reference.json beside
// ours. With -write it replaces the part of the file between its
// bench-report markers; otherwise it prints the tables.
//
//	go run ./hack/bench-report -write docs/benchmarks.md bin/bench/*.json
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

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
	runs := make([]load.Result, fs.NArg())
	for i, path := range fs.Args() {
		if err := readJSON(path, &runs[i]); err != nil {
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

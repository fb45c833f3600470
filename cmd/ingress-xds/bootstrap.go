package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ingress-xds/ingress-xds/xds"
)

func runBootstrap(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bootstrap", flag.ContinueOnError)
	var o xds.BootstrapOptions
	fs.StringVar(&o.XDSAddress, "xds-address", "127.0.0.1:18000", "host:port of the ingress-xds xDS server")
	fs.StringVar(&o.NodeID, "node-id", defaultNodeID(), "Envoy node id (default: $POD_NAME, else the hostname)")
	fs.StringVar(&o.AdminAddress, "admin-address", "127.0.0.1:9901", "host:port for Envoy's admin interface")
	fs.BoolVar(&o.Delta, "delta", true, "use incremental (delta) ADS; --delta=false: state of the world, for which the control plane sends every cluster, not on demand (docs/benchmarks.md, issue 31)")
	fs.StringVar(&o.Stats, "envoy-stats", xds.StatsOperators, "which of Envoy's statistics to keep: operators (server, xDS, listener and HTTP totals, and per cluster its request and connection totals, membership and EDS updates; a cluster's traffic stats created on first use) or all (Envoy's default: about 150 per cluster)")
	var heap heapFlags
	fs.Var(&heap.maxHeap, "max-heap", "heap Envoy may use (bytes, or a quantity like 900Mi); near it, the overload manager returns memory, drops keep-alive, answers 503 and refuses connections rather than let Envoy be killed (default: 85% of --memory-limit; none without it)")
	fs.Var(&heap.memoryLimit, "memory-limit", "memory limit of Envoy's container (the Downward API's limits.memory): --max-heap defaults to 85% of it")
	var tlsFlags bootstrapTLSFlags
	tlsFlags.register(fs)
	out := fs.String("out", "", "file to write (default: stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := tlsFlags.apply(&o); err != nil {
		return err
	}
	o.MaxHeapBytes = heap.bytes()
	b, err := xds.Bootstrap(o)
	if err != nil {
		return err
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		return fmt.Errorf("encoding bootstrap: %w", err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	if *out == "" {
		_, err = stdout.Write(pretty.Bytes())
		return err
	}
	if err := os.WriteFile(*out, pretty.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing bootstrap: %w", err)
	}
	return nil
}

func defaultNodeID() string {
	if pod := os.Getenv("POD_NAME"); pod != "" {
		return pod
	}
	if host, err := os.Hostname(); err == nil {
		return host
	}
	return "envoy"
}

// Command ingress-load measures an Ingress control plane under load: it
// loads N Ingresses (each with 10 Services of 10 endpoints) into a real API
// server, starts the control plane from a command line, and times, with an
// ADS client on its xDS port, the initial convergence, Ingress and endpoint
// changes, fan-out to many clients and Ingress status; it also reads the
// control plane's peak memory. With -envoy-changes it then starts a real
// Envoy on the control plane and times new Ingresses until Envoy serves
// them from a real backend (in a network namespace: needs root). The
// control plane is any command, so the same run measures a peer. Results:
// a table on stdout, and JSON with -json.
//
//	ingress-load -n 1000 -cmd 'bin/ingress-xds serve --insecure --kubeconfig {kubeconfig} --xds-address {xds} --metrics-address 127.0.0.1:0 --status-address 192.0.2.1'
//	ingress-load -n 1000 -envoy-changes 100 -cmd 'bin/ingress-xds serve --insecure --kubeconfig {kubeconfig} --xds-address {xds} --http-port {http_port} --metrics-address 127.0.0.1:0 --status-address 192.0.2.1'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/load"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ingress-load:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg load.Config
	var jsonPath, logLevel string
	var keep bool
	// A FlagSet of our own: controller-runtime (envtest) registers
	// -kubeconfig on the global one.
	flag := flag.NewFlagSet("ingress-load", flag.ExitOnError)
	flag.IntVar(&cfg.Workload.N, "n", 100, "number of Ingresses (each with 10 Services and 10 EndpointSlices)")
	flag.StringVar(&cfg.Workload.Namespace, "namespace", "ingress-load", "namespace of the workload")
	flag.IntVar(&cfg.Workload.AnnotatedEvery, "annotated-every", 0, "give every Nth Ingress one of a mix of ingress-nginx annotations (4: a quarter of them; 0: none)")
	flag.BoolVar(&cfg.Workload.GatewayAPI, "gateway-api", false, "the workload as Gateway API: each Ingress's host an HTTPRoute of its own on one Gateway, and the change samples new HTTPRoutes (needs -crds deploy/gateway-api/standard-install.yaml)")
	flag.BoolVar(&cfg.Workload.Headless, "headless", true, "create headless Services: the control plane routes to endpoints either way, and allocating 100,000 ClusterIPs makes creation 20 times slower")
	flag.BoolVar(&cfg.ValidateIR, "validate-ir", true, "add --validate-ir to an ingress-xds serve -cmd: a broken IR contract is logged and counted (it lengthens full builds, docs/benchmarks.md; false to measure without)")
	flag.StringVar(&cfg.Command, "cmd", "", "control plane command line; {kubeconfig}, {xds} (127.0.0.1:port), {xds_port} and {http_port} (a free port for Envoy's HTTP listener) are filled in")
	flag.StringVar(&cfg.Kubeconfig, "kubeconfig", "", "load an existing cluster instead of starting kube-apiserver and etcd")
	flag.StringVar(&cfg.CRDs, "crds", "", "install the CustomResourceDefinitions of this YAML file or directory first (a peer's, e.g. Contour's examples/contour/01-crds.yaml)")
	flag.StringVar(&cfg.KubeAssets, "kube-assets", os.Getenv("KUBEBUILDER_ASSETS"), "directory with kube-apiserver and etcd (default $KUBEBUILDER_ASSETS, else .tools/kube)")
	flag.BoolVar(&cfg.Delta, "delta", true, "ADS clients and Envoy speak incremental (delta) xDS, as bootstrap's default; -delta=false: state of the world")
	flag.BoolVar(&cfg.OnDemandClusters, "on-demand-clusters", true, "with -delta, the ADS client also asks by name for every cluster the routes name, as a control plane serving on-demand clusters (serve --on-demand-clusters) needs; the fan-out clients ask for -fanout-clusters of them")
	flag.IntVar(&cfg.Changes, "changes", 20, "samples of each kind of change")
	flag.DurationVar(&cfg.Interval, "interval", time.Second, "pause after each change sample")
	flag.IntVar(&cfg.Fanout, "fanout", 0, "clients of the fan-out test (0 skips it)")
	flag.IntVar(&cfg.FanoutClusters, "fanout-clusters", 10, "with -delta and -on-demand-clusters, the clusters each fan-out client asks for by name, as a delta Envoy whose traffic has reached that many backends (the fan-out change's among them), and then the load assignments of the clusters it holds, as Envoy does; 0: every load assignment, not on demand")
	flag.BoolVar(&cfg.FanoutReconnect, "fanout-reconnect", false, "after the fan-out's change, drop every fan-out client and dial them all again at once (a reconnect storm), and time it")
	flag.BoolVar(&cfg.FanoutH2, "fanout-h2", false, "the fan-out clients speak HTTP/2 themselves and read each response as it arrives, where gRPC's client holds it whole until its end: a reconnect storm at 10,000 Ingresses, each client sent the route configuration at once, outgrows the machine with gRPC's")
	flag.DurationVar(&cfg.FanoutPause, "fanout-pause", 0, "keep the fan-out clients connected, the control plane idle, this long before the change (to take its profiles)")
	flag.BoolVar(&cfg.Status, "status", true, "time until every Ingress has a status address (the control plane must write one)")
	flag.IntVar(&cfg.CreateWorkers, "workers", 32, "creates in flight at once")
	flag.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "bound on each phase: creating, converging, status, fan-out")
	flag.DurationVar(&cfg.Settle, "settle", 3*time.Second, "pause between convergence (and status) and the changes")
	flag.StringVar(&cfg.Dir, "dir", "", "directory for the kubeconfig, control-plane log and perf data (default: a new temporary one)")
	flag.BoolVar(&keep, "keep", false, "keep the -dir directory when it was created here")
	flag.BoolVar(&cfg.Perf, "perf", false, "record the control plane with `perf record -g` during convergence, the changes and the fan-out's (with this process too)")
	flag.IntVar(&cfg.EnvoyChanges, "envoy-changes", 0, "after the other changes, start a real Envoy and time this many new Ingresses until Envoy serves them (0 skips it; needs {http_port} in -cmd and root)")
	flag.StringVar(&cfg.EnvoyBinary, "envoy", "", "Envoy binary for -envoy-changes (default .tools/bin/envoy)")
	flag.StringVar(&cfg.Bootstrap, "bootstrap", load.DefaultBootstrap, "command writing Envoy's bootstrap for -envoy-changes; {xds}, {admin}, {node_id} and {out} are filled in, and --delta=false is added with -delta=false")
	flag.DurationVar(&cfg.EnvoyPoll, "envoy-poll", 2*time.Millisecond, "pause between requests to Envoy while waiting for an Ingress to be served")
	envoyKinds := flag.String("envoy-kinds", strings.Join(load.AllKinds, ","), "kinds of change of -envoy-changes, taking turns: host (a new Ingress of a new host), path (a new Ingress adding a path to a host), backend (a path switched to a Service Envoy has no cluster of), endpoint (an EndpointSlice moved to another backend)")
	flag.DurationVar(&cfg.EnvoyInterval, "envoy-interval", 500*time.Millisecond, "pause after each change of -envoy-changes (the bytes and CPU of a change are counted until the end of it)")
	flag.IntVar(&cfg.EnvoyConcurrency, "envoy-concurrency", 1, "Envoy's --concurrency (worker threads) in the Envoy phase")
	flag.BoolVar(&cfg.EnvoyProfile, "envoy-profile", true, "after -envoy-changes, read where Envoy's memory is: /memory, and the sizes of /stats, /clusters and /config_dump (minutes at 10,000 Ingresses)")
	flag.StringVar(&jsonPath, "json", "", "also write the result as JSON to this file (- for stdout)")
	flag.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	flag.Parse(os.Args[1:])
	cfg.Flags = measurementFlags(flag)

	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if cfg.KubeAssets == "" && cfg.Kubeconfig == "" {
		if _, err := os.Stat(".tools/kube/kube-apiserver"); err == nil {
			cfg.KubeAssets, _ = filepath.Abs(".tools/kube")
		}
	}
	if cfg.EnvoyBinary == "" {
		if _, err := os.Stat(".tools/bin/envoy"); err == nil {
			cfg.EnvoyBinary, _ = filepath.Abs(".tools/bin/envoy")
		}
	}
	var err error
	if cfg.EnvoyKinds, err = load.ParseKinds(*envoyKinds); err != nil {
		return fmt.Errorf("-envoy-kinds: %w", err)
	}
	if !cfg.Delta && cfg.Bootstrap == load.DefaultBootstrap {
		cfg.Bootstrap += " --delta=false"
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "ingress-load-")
		if err != nil {
			return err
		}
		cfg.Dir = dir
		if !keep && !cfg.Perf {
			defer os.RemoveAll(dir)
		}
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := load.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if err := res.WriteTable(os.Stdout); err != nil {
		return err
	}
	return writeJSON(jsonPath, res)
}

// measurementFlags writes the flags given that shape what is measured,
// leaving out where files go and how the cluster is found, which say
// nothing of the run.
func measurementFlags(fs *flag.FlagSet) string {
	var words []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "cmd", "json", "dir", "keep", "kubeconfig", "kube-assets", "envoy", "log-level":
			return
		}
		words = append(words, "-"+f.Name+"="+f.Value.String())
	})
	return strings.Join(words, " ")
}

func writeJSON(path string, res *load.Result) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the result: %w", err)
	}
	data = append(data, '\n')
	if path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

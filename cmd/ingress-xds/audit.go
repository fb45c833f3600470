package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/audit"
	"github.com/ingress-xds/ingress-xds/translate/audit/togateway"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// errRefused makes audit exit 1 once its report is printed: some Ingress
// would not be served (for CI).
var errRefused = errors.New("some Ingresses would not be served (refused)")

// errDiffers makes audit --to-gateway-api exit 1 once its objects and
// report are written: some Ingress routes differently through Gateway
// API (for CI).
var errDiffers = errors.New("some Ingresses route differently through Gateway API")

// gatewayFlags are audit --to-gateway-api's.
type gatewayFlags struct {
	on                          bool
	name, namespace, class, dir string
	report                      string
}

func (g *gatewayFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&g.on, "to-gateway-api", false, "print the Gateway API objects (gateway.networking.k8s.io/v1) that express each Ingress of the class, and report on stderr, per Ingress, each annotation converted or why not, and whether both front-ends route the Ingress and its objects the same (exit 1 if some do not; docs/gateway-api.md)")
	fs.StringVar(&g.name, "gateway-name", togateway.DefaultGatewayName, "with --to-gateway-api: the Gateway the HTTPRoutes attach to")
	fs.StringVar(&g.namespace, "gateway-namespace", "", "with --to-gateway-api: the Gateway's namespace (ReferenceGrants then open the TLS Secrets of other namespaces to it); empty: a Gateway in each Ingress's namespace")
	fs.StringVar(&g.class, "gateway-class", togateway.DefaultGatewayName, "with --to-gateway-api: the Gateway's gatewayClassName (a GatewayClass of --gateway-controller-name)")
	fs.StringVar(&g.dir, "gateway-api-dir", "", "with --to-gateway-api: write the objects to this directory, one file each, rather than to stdout")
	fs.StringVar(&g.report, "report", "", "with --to-gateway-api: write the report to this file rather than to stderr")
}

// runAudit prints what ingress-xds would make of the Ingresses of a class,
// from a cluster (--kubeconfig) or manifests (-f), with serve's flags for
// choosing and translating them.
func runAudit(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	var f serveFlags
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else in-cluster config); not with -f")
	path := fs.String("f", "", "audit this manifest file or directory instead of a cluster (class-less Ingresses in it count as of the class, as with translate -f)")
	output := fs.String("o", "text", "output: text (for people) or json (for scripts)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the cluster's objects to be listed")
	var gw gatewayFlags
	gw.register(fs)
	f.registerClass(fs)
	f.translate.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !gw.on && (gw.dir != "" || gw.report != "") {
		return fmt.Errorf("--gateway-api-dir and --report go with --to-gateway-api")
	}
	f.translate.nginxDefaultsByClass(fs, f.controllerClass)
	if err := f.translate.validate(); err != nil {
		return err
	}
	if *output != "text" && *output != "json" {
		return fmt.Errorf("-o %q is neither text nor json", *output)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	filter := kube.ClassFilter{ClassName: f.ingressClass, ControllerName: f.controllerClass, WatchClassless: f.watchClassless}
	var st *kube.State
	if *path != "" {
		if f.kubeconfig != "" {
			return fmt.Errorf("-f and --kubeconfig: choose one")
		}
		filter.WatchClassless = true // as translate -f: files have no default class
		var err error
		if st, err = kube.LoadStateWith(*path, filter, f.translate.references()); err != nil {
			fmt.Fprintf(os.Stderr, "warning: %v\n", err) // undecodable documents are skipped, as serve skips them
		}
		if st == nil {
			return fmt.Errorf("no manifests read from %s", *path)
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, *timeout)
		defer cancel()
		var err error
		if st, err = clusterState(ctx, f.kubeconfig, filter, &f.translate); err != nil {
			return err
		}
	}
	st = f.translate.resolveOnce(ctx, st)
	if gw.on {
		conv := togateway.Options{AnnotationsPrefix: f.translate.annotationsPrefix, GatewayName: gw.name, GatewayNamespace: gw.namespace,
			GatewayClassName: gw.class, SSLRedirectByDefault: f.translate.nginxDefaults}
		return writeGatewayAPI(st, f.translate.options(), conv, gw, *output, stdout, os.Stderr)
	}
	report := audit.Run(st, f.translate.options())
	var out []byte
	if *output == "json" {
		var err error
		if out, err = report.JSON(); err != nil {
			return err
		}
	} else {
		out = report.Text()
	}
	if _, err := stdout.Write(out); err != nil {
		return err
	}
	if report.Refused() {
		return errRefused
	}
	return nil
}

// writeGatewayAPI converts and checks, then writes the objects (to
// stdout, or a directory) and the report (to stderr, or a file).
func writeGatewayAPI(st *kube.State, opts ingress.Options, conv togateway.Options, gw gatewayFlags, output string, stdout, stderr io.Writer) error {
	report, res := audit.ToGatewayAPI(st, opts, conv)
	if gw.dir != "" {
		files, err := res.Files()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(gw.dir, 0o755); err != nil {
			return fmt.Errorf("--gateway-api-dir: %w", err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(gw.dir, name), data, 0o644); err != nil {
				return fmt.Errorf("writing the Gateway API objects: %w", err)
			}
		}
	} else {
		objs, err := res.YAML()
		if err != nil {
			return err
		}
		if _, err := stdout.Write(objs); err != nil {
			return err
		}
	}
	out := report.Text()
	if output == "json" {
		var err error
		if out, err = report.JSON(); err != nil {
			return err
		}
	}
	if gw.report != "" {
		if err := os.WriteFile(gw.report, out, 0o644); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	} else if _, err := stderr.Write(out); err != nil {
		return err
	}
	if report.Differs() {
		return errDiffers
	}
	return nil
}

// clusterState lists a cluster's objects once, through the informers
// serve uses (the same class filter, the same referenced Secrets and
// ConfigMaps), and returns the first whole State.
func clusterState(ctx context.Context, kubeconfig string, filter kube.ClassFilter, tf *translateFlags) (*kube.State, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating kubernetes client: %w", err)
	}
	factories := kube.NewInformerFactories(client)
	source := &kube.ClusterSource{Informers: factories.Informers(), Filter: filter, References: tf.references(),
		Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		factories.Shutdown()
	}()
	synced := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- source.Run(ctx, func() {
			select {
			case synced <- struct{}{}:
			default:
			}
		})
	}()
	factories.Start(ctx.Done())
	select {
	case <-synced:
		return source.State(), nil
	case err := <-done:
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("listing the cluster's objects: %w", err)
	case <-ctx.Done():
		return nil, fmt.Errorf("listing the cluster's objects: %w", ctx.Err())
	}
}

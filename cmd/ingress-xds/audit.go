package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/audit"
)

// errRefused makes audit exit 1 once its report is printed: some Ingress
// would not be served (for CI).
var errRefused = errors.New("some Ingresses would not be served (refused)")

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
	f.registerClass(fs)
	f.translate.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
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
		if st, err = kube.LoadStateWith(*path, filter, f.translate.ingressReferences()); err != nil {
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
	source := &kube.ClusterSource{Informers: factories.Informers(), Filter: filter, References: tf.ingressReferences(),
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

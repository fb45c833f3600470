package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ingress-xds/ingress-xds/internal/nginxmetrics"
	"github.com/ingress-xds/ingress-xds/internal/pipeline"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/xds"
)

type serveFlags struct {
	kubeconfig      string
	manifests       string
	ingressClass    string
	controllerClass string
	watchClassless  bool
	translate       translateFlags
	xdsAddress      string
	xdsTLS          serveTLSFlags
	xdsMaxAge       time.Duration
	sotwBudget      int64
	metricsAddress  string
	pprof           bool
	gcPercent       int
	status          statusFlags
	holdoff         time.Duration
	maxHoldoff      time.Duration
	idleAtOnce      bool
	endpointHoldoff time.Duration
	logLevel        string
	streamingList   bool
	validateIR      bool
}

func runServe(ctx context.Context, args []string) error {
	var f serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else in-cluster config)")
	fs.StringVar(&f.manifests, "manifests", "", "serve from this directory of manifests instead of a cluster")
	f.registerClass(fs)
	f.translate.register(fs)
	fs.StringVar(&f.xdsAddress, "xds-address", ":18000", "address of the xDS gRPC server")
	fs.Int64Var(&f.sotwBudget, "xds-sotw-budget", xds.DefaultSotWBudget, "bytes that state-of-the-world Envoys may be expected to send the control plane at once, each naming every load assignment when it connects and when it answers a change; an Envoy's stream or its change waits beyond it, so that a fleet reconnecting at once does not take the control plane past its memory (docs/install.md, \"Large fleets\")")
	fs.DurationVar(&f.xdsMaxAge, "xds-max-connection-age", 30*time.Minute, "ask an Envoy to reconnect once its connection is this old (gRPC's GOAWAY, give or take a tenth), so that Envoys spread again over the replicas after a rollout; the Envoy keeps its configuration meanwhile; 0: never")
	f.xdsTLS.register(fs)
	fs.StringVar(&f.metricsAddress, "metrics-address", ":8000", "address serving /healthz, /readyz and /metrics")
	fs.BoolVar(&f.pprof, "pprof", false, "also serve Go's profiles under /debug/pprof/ on --metrics-address")
	fs.IntVar(&f.gcPercent, "gc-percent", defaultGCPercent, "let the Go heap grow this many percent over what is live before collecting (Go's GOGC; ignored when $GOGC is set)")
	f.status.register(fs)
	fs.DurationVar(&f.holdoff, "holdoff", 100*time.Millisecond, "wait this long for a burst of changes to end before rebuilding")
	fs.DurationVar(&f.maxHoldoff, "max-holdoff", 500*time.Millisecond, "never delay a rebuild longer than this")
	fs.BoolVar(&f.idleAtOnce, "idle-at-once", true, "rebuild at once for a change that comes a whole --holdoff after the previous rebuild ended (nothing to batch it with); the changes that come meanwhile are held off as usual")
	fs.DurationVar(&f.endpointHoldoff, "endpoint-holdoff", 10*time.Millisecond, "the holdoff of changes to endpoints alone, which take a fast path (at most 10 times this)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.BoolVar(&f.streamingList, "streaming-list", true, "fill the informers' caches from watches that stream every object (client-go's WatchList); false: from one list per kind, which at start-up costs less CPU but holds each kind's objects untrimmed until its list is in")
	fs.BoolVar(&f.validateIR, "validate-ir", false, "check the IR of every full translation against its contract, logging and counting (ingress_xds_invalid_ir_builds_total) what breaks it, a bug of ingress-xds; at 10,000 Ingresses it is a large part of a build (docs/benchmarks.md), hence off by default; the tests and the load command turn it on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f.translate.nginxDefaultsByClass(fs, f.controllerClass)
	if !f.pprof {
		// Go samples allocation stacks for heap profiles by default, and
		// keeps every sampled stack; only --pprof serves them.
		goruntime.MemProfileRate = 0
	}
	if err := f.translate.validate(); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if err := setGCPercent(f.gcPercent); err != nil {
		return err
	}
	xdsTLS, err := f.xdsTLS.config(logger.With("component", "xds"))
	if err != nil {
		return err
	}
	for {
		err := serveOnce(ctx, &f, logger, xdsTLS)
		var changed *kube.GatewayKindsChanged
		if ctx.Err() != nil || !errors.As(err, &changed) {
			return err
		}
		// Everything starts over, the xDS server too: each Envoy keeps
		// its configuration and reconnects (ServeListener).
		logger.Info("the Gateway API kinds served changed: starting over to watch them", "was", changed.Was, "now", changed.Now)
	}
}

// maxConnectionAge is xds.Options' for the flag's value: the flag's 0
// (never) is the option's negative.
func maxConnectionAge(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}

// serveOnce serves until ctx is done or the Gateway API kinds the API
// server serves change (a *kube.GatewayKindsChanged among its errors),
// which its informers, chosen at its start, cannot follow.
func serveOnce(ctx context.Context, f *serveFlags, logger *slog.Logger, xdsTLS *tls.Config) error {
	// Two lanes into one pipeline: changes to endpoints alone take the fast
	// path after a short holdoff; everything else is batched as usual.
	batcher := xds.NewBatcher(f.holdoff, f.maxHoldoff)
	// The first is the informers' sync: nothing to batch it with.
	batcher.FirstAtOnce = true
	batcher.IdleAtOnce = f.idleAtOnce
	endpointBatcher := xds.NewBatcher(f.endpointHoldoff, 10*f.endpointHoldoff)

	filter := kube.ClassFilter{ClassName: f.ingressClass, ControllerName: f.controllerClass, WatchClassless: f.watchClassless}
	var source kube.Source
	var status *statusRunner
	var events *kube.EventReporter
	var factories *kube.InformerFactories           // nil in file mode
	var gatewayFactory *kube.GatewayInformerFactory // nil in file mode and without the CRDs
	var crdWatch *kube.GatewayCRDWatch              // nil in file mode
	if f.manifests != "" {
		filter.WatchClassless = true // files have no cluster default class to consult
		source = &kube.FileSource{Dir: f.manifests, Filter: filter, Logger: logger.With("component", "files"), References: f.translate.references()}
	} else {
		cfg, err := restConfig(f.kubeconfig)
		if err != nil {
			return err
		}
		client, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return fmt.Errorf("creating kubernetes client: %w", err)
		}
		// The informers' reads wait out an API server that cannot be
		// reached rather than fail, so that they resume as soon as it is
		// back, not after client-go's grown backoff (kube.APIServerWait).
		informerCfg := rest.CopyConfig(cfg)
		informerCfg.Wrap((&kube.APIServerWait{Stop: ctx.Done(), Logger: logger.With("component", "informers")}).Wrap)
		informerClient, err := kubernetes.NewForConfig(informerCfg)
		if err != nil {
			return fmt.Errorf("creating kubernetes client: %w", err)
		}
		factories = kube.NewInformerFactoriesWith(informerClient, kube.InformerOptions{List: !f.streamingList})
		var gatewayKinds []string
		if gatewayFactory, gatewayKinds, err = newGatewayInformerFactory(ctx, informerCfg, informerClient, logger.With("component", "informers")); err != nil {
			return err
		}
		dyn, err := dynamic.NewForConfig(informerCfg)
		if err != nil {
			return fmt.Errorf("creating dynamic client: %w", err)
		}
		crdWatch = &kube.GatewayCRDWatch{Client: dyn, Started: gatewayKinds, Logger: logger}
		informers := factories.Informers()
		informers.Gateway = gatewayFactory.Informers()
		source = &kube.ClusterSource{
			Informers:        informers,
			Filter:           filter,
			Logger:           logger.With("component", "informers"),
			EndpointsChanged: endpointBatcher.Notify,
			References:       f.translate.references(),
		}
		events = kube.NewEventReporter(ctx, client, "ingress-xds")
		defer events.Shutdown()
		f.status.ownAddresses = f.translate.gatewayOwnAddresses
		if status, err = f.status.newStatusRunner(cfg, client, filter, informers.Gateway, cmp.Or(f.translate.gatewayController, gatewayapi.DefaultControllerName), logger); err != nil {
			return err
		}
		status.writer.Refused = f.translate.ingressRefused()
		status.writer.ConfigMap = must(configMapName(f.translate.configMap)) // validate checked it
	}
	// ExternalName Services are resolved here, never by Envoy.
	source = f.translate.resolving(source, factories.Client(), logger)

	// ingress-nginx's controller metrics, fed by the server (ACKs and
	// NACKs), the pipeline (certificates, versions) and the election.
	nginxMetrics := nginxmetrics.New(nginxmetrics.Controller{
		Namespace: podNamespace(), Class: f.controllerClass, Pod: os.Getenv("POD_NAME"),
		Release: version, Build: vcsRevision(), Repository: "https://github.com/ingress-xds/ingress-xds",
	})
	server := xds.NewServerWithOptions(logger.With("component", "xds"), xds.Options{TLS: xdsTLS, Answers: nginxMetrics, MaxConnectionAge: maxConnectionAge(f.xdsMaxAge), SotWBudget: f.sotwBudget})
	translator := translate.NewTranslator(f.translate.options())
	translator.SetValidate(f.validateIR)
	opts := pipeline.Options{
		Logger:     logger,
		Source:     source,
		Translator: translator,
		Server:     server,
		ConfigMap:  must(configMapName(f.translate.configMap)), // validate checked it
		Observer:   nginxMetrics,
	}
	if events != nil { // a nil *EventReporter would be a non-nil EventRecorder
		opts.Events = events
	}
	if status != nil && status.gateway != nil { // likewise
		opts.GatewayStatus = status.gateway
	}
	p := pipeline.New(opts)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	run := func(name string, fn func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
				cancel()
			}
		}()
	}
	run("source", func() error {
		return source.Run(ctx, batcher.Notify)
	})
	if factories != nil {
		factories.Start(ctx.Done())
		defer factories.Shutdown() // after wg.Wait: ctx is done by then
		gatewayFactory.Start(ctx.Done())
		defer gatewayFactory.Shutdown()
	}
	run("translator", func() error { batcher.Run(ctx, p.Rebuild); return nil })
	run("endpoints", func() error { endpointBatcher.Run(ctx, p.Rebuild); return nil })
	if status != nil {
		// Status has informers and a work queue of its own; its writes
		// wait for the first snapshot, so that they neither slow the
		// informers' lists at the API server nor compete with the first
		// build, and an address is never written before Envoy can get
		// configuration.
		status.setHold(p.Published())
		status.leading = nginxMetrics
		status.run(ctx, run)
	}
	if crdWatch != nil {
		run("gateway-crds", func() error { return crdWatch.Run(ctx) })
	}
	run("xds", func() error { return server.Serve(ctx, f.xdsAddress) })
	handler := pipeline.Handler(pipeline.HTTPOptions{Ready: p.Ready, Metrics: prometheus.Gatherers{server.Gatherer(), p.Gatherer(), nginxMetrics.Gatherer()}, Profiles: f.pprof})
	run("health", func() error { return pipeline.ServeHTTP(ctx, f.metricsAddress, handler) })

	<-ctx.Done()
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// defaultGCPercent is serve's garbage collection target. Almost all of the
// control plane's heap is long-lived (informer caches, translations,
// encodings kept to be sent), while Go's default (100) lets the heap grow to
// twice that before collecting, as much garbage again as there is live
// heap. 50 costs a collection every half as much allocation: little between
// changes, when the control plane allocates little, more while the initial
// list fills the heap (docs/benchmarks.md, "Memory", has the figures).
const defaultGCPercent = 50

// setGCPercent applies --gc-percent unless $GOGC, which the Go runtime has
// applied already, says otherwise.
func setGCPercent(percent int) error {
	if os.Getenv("GOGC") != "" {
		return nil
	}
	if percent <= 0 {
		return fmt.Errorf("--gc-percent must be positive, got %d", percent)
	}
	debug.SetGCPercent(percent)
	return nil
}

// vcsRevision is the commit the binary was built from, when the Go
// toolchain recorded it: build_info's build label, as ingress-nginx's
// COMMIT.
func vcsRevision() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules() // honours $KUBECONFIG
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubernetes client config: %w", err)
	}
	// client-go's default of 5 QPS is too slow for Events on many Ingresses
	// and informer relists; status writes have a client of their own.
	cfg.QPS, cfg.Burst = 50, 100
	// Lists of 100,000 objects: gzip costs the control plane CPU and saves
	// nothing on the short path to the API server.
	cfg.DisableCompression = true
	// Protobuf rather than JSON for the built-in types we read and write:
	// decoding the initial lists of 100,000 Services and EndpointSlices
	// from JSON costs far more CPU and garbage, and the responses are
	// larger (docs/benchmarks.md, "Optimisations", 16, and "Figures moved
	// from code comments").
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.UserAgent = "ingress-xds/" + version
	return cfg, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

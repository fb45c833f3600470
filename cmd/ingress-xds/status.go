package main

import (
	"context"
	"flag"
	"fmt"
	corev1 "k8s.io/api/core/v1"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
)

// statusFlags are the flags of Ingress status and leader election, which
// only matter in cluster mode.
type statusFlags struct {
	addresses      string
	envoyService   string
	envoyNamespace string
	envoySelector  string
	qps            float64
	burst          int
	workers        int
	// gatewayServiceType is the type of the Services of Gateways on
	// ports of their own; ownAddresses, set by serve from
	// --gateway-own-addresses, says there are such Gateways.
	gatewayServiceType string
	ownAddresses       bool

	leaderElect   bool
	leaseNS       string
	leaseName     string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
}

func (s *statusFlags) register(fs *flag.FlagSet) {
	ns := podNamespace()
	fs.StringVar(&s.addresses, "status-address", "", "comma-separated IPs or hostnames to write into Ingress status (first choice)")
	fs.StringVar(&s.envoyService, "envoy-service", "", "NAMESPACE/NAME of the Service in front of Envoy, whose status.loadBalancer goes into Ingress status (second choice)")
	fs.StringVar(&s.envoyNamespace, "envoy-namespace", ns, "namespace of the Envoy DaemonSet, whose nodes' addresses go into Ingress status when neither --status-address nor --envoy-service is set")
	fs.StringVar(&s.envoySelector, "envoy-selector", "app.kubernetes.io/name=envoy", "label selector of the Envoy pods")
	fs.StringVar(&s.gatewayServiceType, "gateway-service-type", string(corev1.ServiceTypeLoadBalancer), "with --gateway-own-addresses: the type of the Service made per Gateway in --envoy-namespace, selecting the --envoy-selector pods, whose addresses are the Gateway's: LoadBalancer, NodePort or ClusterIP")
	fs.Float64Var(&s.qps, "status-qps", 250, "at most this many Ingress status writes per second, sustained")
	fs.IntVar(&s.burst, "status-burst", 500, "at most this many Ingress status writes in a burst")
	fs.IntVar(&s.workers, "status-workers", 16, "Ingress status writes in flight at once")
	fs.BoolVar(&s.leaderElect, "leader-elect", true, "write status only while holding the leader lease (all replicas serve xDS)")
	fs.StringVar(&s.leaseNS, "leader-election-namespace", ns, "namespace of the leader Lease")
	fs.StringVar(&s.leaseName, "leader-election-id", "ingress-xds-leader", "name of the leader Lease")
	fs.DurationVar(&s.leaseDuration, "leader-election-lease-duration", 15*time.Second, "how long followers wait for a silent leader before taking over")
	fs.DurationVar(&s.renewDeadline, "leader-election-renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up the lead")
	fs.DurationVar(&s.retryPeriod, "leader-election-retry-period", 2*time.Second, "pause between attempts to acquire or renew the lease")
}

// statusRunner is the status writer and, unless disabled, the leader
// election that decides when it writes.
type statusRunner struct {
	writer *kube.StatusWriter
	// gateway writes Gateway API status beside; nil without the CRDs.
	gateway  *kube.GatewayStatusWriter
	election *kube.LeaderElection // nil: always write
	// leading, when set, is told of each term (ingress-nginx's
	// leader_election_status: internal/nginxmetrics).
	leading leadingObserver
}

// leadingObserver is told when this replica starts and stops leading the
// lease name, as ingress-nginx's metric collector is.
type leadingObserver interface {
	OnStartedLeading(name string)
	OnStoppedLeading(name string)
}

// newStatusRunner builds the status writer from the flags. The address
// source is the first of --status-address, --envoy-service and the Envoy
// DaemonSet that is configured. With Gateway API informers (the CRDs
// served), it builds the Gateway API status writer too, on the same
// addresses and the same budget of writes, for the GatewayClasses of
// gatewayController.
func (s *statusFlags) newStatusRunner(cfg *rest.Config, client kubernetes.Interface, filter kube.ClassFilter, gateway kube.GatewayInformers, gatewayController string, logger *slog.Logger) (*statusRunner, error) {
	if s.qps <= 0 || s.burst < 1 || s.workers < 1 {
		return nil, fmt.Errorf("--status-qps, --status-burst and --status-workers must be positive")
	}
	// The writes get a client of their own, paced by the writer's limiter
	// rather than client-go's: sharing the main client would queue
	// informer lists and lease renewals behind thousands of status writes.
	statusCfg := rest.CopyConfig(cfg)
	statusCfg.QPS, statusCfg.RateLimiter = -1, nil // negative: no client-side limit
	statusClient, err := kubernetes.NewForConfig(statusCfg)
	if err != nil {
		return nil, fmt.Errorf("creating status client: %w", err)
	}
	log := logger.With("component", "status")

	var addresses kube.AddressSource
	switch {
	case s.addresses != "":
		static, err := kube.NewStaticAddresses(splitList(s.addresses))
		if err != nil {
			return nil, fmt.Errorf("--status-address: %w", err)
		}
		addresses = static
	case s.envoyService != "":
		ns, name, ok := strings.Cut(s.envoyService, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("--envoy-service %q is not NAMESPACE/NAME", s.envoyService)
		}
		addresses = &kube.ServiceAddresses{Client: statusClient, Service: types.NamespacedName{Namespace: ns, Name: name}, Logger: log}
	default:
		selector, err := labels.Parse(s.envoySelector)
		if err != nil {
			return nil, fmt.Errorf("--envoy-selector: %w", err)
		}
		if selector.Empty() {
			return nil, fmt.Errorf("--envoy-selector is empty: it would take every pod of %s for an Envoy", s.envoyNamespace)
		}
		addresses = &kube.DaemonSetAddresses{Client: statusClient, Namespace: s.envoyNamespace, Selector: selector, Logger: log}
	}

	limiter := flowcontrol.NewTokenBucketRateLimiter(float32(s.qps), s.burst)
	r := &statusRunner{writer: kube.NewStatusWriter(statusClient, filter, addresses, limiter, s.workers, log)}
	if gateway.GatewayClasses != nil || gateway.Gateways != nil || gateway.HTTPRoutes != nil || gateway.GRPCRoutes != nil || gateway.TLSRoutes != nil {
		// The CRDs are served as JSON only.
		gwCfg := rest.CopyConfig(statusCfg)
		gwCfg.ContentType, gwCfg.AcceptContentTypes = runtime.ContentTypeJSON, runtime.ContentTypeJSON
		gwClient, err := gwclient.NewForConfig(gwCfg)
		if err != nil {
			return nil, fmt.Errorf("creating Gateway API status client: %w", err)
		}
		r.gateway = kube.NewGatewayStatusWriter(gwClient, gatewayController, gateway, addresses, limiter, s.workers, log)
		r.writer.AddressesChanged = r.gateway.AddressesChanged
		r.gateway.SupportedFeatures = gatewayapi.SupportedFeatures(s.ownAddresses)
		if s.ownAddresses {
			selector, err := labels.ConvertSelectorToLabelsMap(s.envoySelector)
			if err != nil {
				return nil, fmt.Errorf("--envoy-selector, for the Gateways' Services: %w", err)
			}
			r.gateway.Services = &kube.GatewayServices{Client: statusClient, Namespace: s.envoyNamespace, Selector: selector,
				Type: corev1.ServiceType(s.gatewayServiceType), Logger: log}
		}
	}
	if s.leaderElect {
		r.election = &kube.LeaderElection{
			Client: client, Namespace: s.leaseNS, Name: s.leaseName, Identity: leaderIdentity(),
			LeaseDuration: s.leaseDuration, RenewDeadline: s.renewDeadline, RetryPeriod: s.retryPeriod,
			Logger: logger.With("component", "leader-election"),
		}
	}
	return r, nil
}

// setHold holds both writers' writes back until hold closes.
func (r *statusRunner) setHold(hold <-chan struct{}) {
	r.writer.Hold = hold
	if r.gateway != nil {
		r.gateway.Hold = hold
	}
}

// writeStatus writes status, Ingresses' and Gateway API objects', until
// ctx is done.
func (r *statusRunner) writeStatus(ctx context.Context) {
	if r.gateway == nil {
		r.writer.Lead(ctx)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.gateway.Lead(ctx) })
	r.writer.Lead(ctx)
	wg.Wait()
}

// run starts the writers' informers (or event handlers) and, when
// leading, their workers.
func (r *statusRunner) run(ctx context.Context, run func(name string, fn func() error)) {
	run("status", func() error { return r.writer.Run(ctx) })
	if r.gateway != nil {
		run("gateway-status", func() error { return r.gateway.Run(ctx) })
	}
	if r.election == nil {
		run("status-writer", func() error { r.writeStatus(ctx); return nil })
		return
	}
	lead := r.writeStatus
	if r.leading != nil {
		name := r.election.Name
		r.leading.OnStoppedLeading(name) // a follower until it wins
		lead = func(term context.Context) {
			r.leading.OnStartedLeading(name)
			defer r.leading.OnStoppedLeading(name)
			r.writeStatus(term)
		}
	}
	run("leader-election", func() error { return r.election.Run(ctx, lead) })
}

// podNamespace is the namespace we run in: $POD_NAMESPACE (the downward
// API), else the service account's, else "default" (outside a cluster).
func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return "default"
}

// leaderIdentity is unique per process: the pod name says which replica
// leads, and the suffix keeps two processes on one host (or a restarted
// pod that reuses its name) apart.
func leaderIdentity() string {
	name := os.Getenv("POD_NAME")
	if name == "" {
		name, _ = os.Hostname()
	}
	return name + "_" + string(uuid.NewUUID())[:8]
}

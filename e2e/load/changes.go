package load

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
)

// Sample is one change and how long it took to reach the ADS client,
// counted from just before the API request: what a user who runs kubectl
// would wait.
type Sample struct {
	// Latency is until the response carrying the change arrived.
	Latency time.Duration
	// API is how long the API server took to accept the write; it is part
	// of Latency.
	API time.Duration
}

// changer makes changes one at a time and times each.
type changer struct {
	kube     kubernetes.Interface
	gateway  gwclient.Interface // the Gateway API workload's (Workload.GatewayAPI)
	ads      *adsclient.Client
	w        Workload
	run      string // names this run's change Ingresses
	interval time.Duration
	fanoutH2 bool // the fan-out clients speak HTTP/2 themselves (h2stream.go)
	// profiled runs fn, under perf with -perf (files named after name).
	profiled func(name string, fn func() error) error
	log      *slog.Logger
}

// pick spreads the samples over the workload: a stride prime to any
// realistic count, so that consecutive samples touch unrelated objects.
func pick(k, count int) int { return (k*7919 + 3) % count }

// ingressChanges creates count Ingresses, one at a time, each with new
// hosts, and times each until the client routes both hosts.
func (c *changer) ingressChanges(ctx context.Context, count int) ([]Sample, error) {
	return c.hostChanges(ctx, count, "Ingress", func(ctx context.Context, k int) (string, []string, error) {
		ing := c.w.ChangeIngress(c.run, k, pick(k, c.w.N))
		hosts := make([]string, 0, len(ing.Spec.Rules))
		for _, r := range ing.Spec.Rules {
			hosts = append(hosts, r.Host)
		}
		_, err := c.kube.NetworkingV1().Ingresses(c.w.Namespace).Create(ctx, ing, metav1.CreateOptions{})
		return ing.Name, hosts, err
	})
}

// hostChanges creates count objects of a kind, one at a time (create
// writes sample k's and says its name and new hosts), and times each
// until the client routes all its hosts.
func (c *changer) hostChanges(ctx context.Context, count int, kind string, create func(context.Context, int) (string, []string, error)) ([]Sample, error) {
	var samples []Sample
	for k := range count {
		start := time.Now()
		name, hosts, err := create(ctx, k)
		if err != nil {
			return samples, fmt.Errorf("%s change %d: creating %s: %w", kind, k, name, err)
		}
		api := time.Since(start)
		watch := &hostWatch{hosts: hosts}
		snap, err := c.ads.WaitFor(ctx, watch.ready)
		if err != nil {
			return samples, fmt.Errorf("%s change %d: waiting for hosts %v: %w (client holds %s)", kind, k, hosts, err, describe(snap))
		}
		s := Sample{Latency: snap.Received[resource.RouteType].Sub(start), API: api}
		samples = append(samples, s)
		c.log.Debug(kind+" change", "sample", k, "latency", s.Latency, "api", s.API)
		if err := c.pause(ctx); err != nil {
			return samples, err
		}
	}
	return samples, nil
}

// endpointChanges adds one endpoint to count EndpointSlices, one at a time,
// and times each until the client's load assignment holds it.
func (c *changer) endpointChanges(ctx context.Context, count int) ([]Sample, error) {
	var samples []Sample
	slices := c.kube.DiscoveryV1().EndpointSlices(c.w.Namespace)
	for k := range count {
		svc := pick(k, c.w.Services())
		slice, err := slices.Get(ctx, SliceName(svc), metav1.GetOptions{})
		if err != nil {
			return samples, fmt.Errorf("endpoint change %d: %w", k, err)
		}
		j := len(slice.Endpoints) + 1
		if j >= addressesPerService {
			return samples, fmt.Errorf("endpoint change %d: slice %s already has %d endpoints (too many runs against this cluster?)", k, slice.Name, j-1)
		}
		// The load assignment is found by an address only it holds: the
		// control plane may name it as it likes.
		cla := findLoadAssignment(c.ads.Snapshot(), EndpointAddress(svc, 1))
		if cla == "" {
			return samples, fmt.Errorf("endpoint change %d: the client holds no load assignment with %s (Service %s)", k, EndpointAddress(svc, 1), ServiceName(svc))
		}
		added := EndpointAddress(svc, j)
		slice.Endpoints = append(slice.Endpoints, Endpoint(svc, j))

		start := time.Now()
		if _, err := slices.Update(ctx, slice, metav1.UpdateOptions{}); err != nil {
			return samples, fmt.Errorf("endpoint change %d: updating %s: %w", k, slice.Name, err)
		}
		api := time.Since(start)
		snap, err := c.ads.WaitFor(ctx, func(s *adsclient.Snapshot) bool { return holdsAddress(s, cla, added) })
		if err != nil {
			return samples, fmt.Errorf("endpoint change %d: waiting for %s in %s: %w", k, added, cla, err)
		}
		s := Sample{Latency: snap.Received[resource.EndpointType].Sub(start), API: api}
		samples = append(samples, s)
		c.log.Debug("endpoint change", "sample", k, "latency", s.Latency, "api", s.API)
		if err := c.pause(ctx); err != nil {
			return samples, err
		}
	}
	return samples, nil
}

// pause lets the control plane finish what a change set off besides the
// change itself (writing the new Ingress's status, then rebuilding for that
// write), so that it does not land in the next sample.
func (c *changer) pause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(c.interval):
		return nil
	}
}

// latencies returns the Latency of each sample.
func latencies(samples []Sample) []time.Duration {
	out := make([]time.Duration, len(samples))
	for i, s := range samples {
		out[i] = s.Latency
	}
	return out
}

// apiLatencies returns the API of each sample.
func apiLatencies(samples []Sample) []time.Duration {
	out := make([]time.Duration, len(samples))
	for i, s := range samples {
		out[i] = s.API
	}
	return out
}

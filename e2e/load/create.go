package load

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// CreateStats says how the workload creation went.
type CreateStats struct {
	Objects  int           `json:"objects"`
	Existing int           `json:"existing"` // already there (a second run on one cluster)
	Took     time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
}

// Create writes the workload into the cluster with workers requests in
// flight: Services first, then their EndpointSlices, then the Ingresses
// (or the Gateway API workload's HTTPRoutes, through gw), so that a
// control plane already watching sees complete backends. Objects that
// already exist are left as they are.
func Create(ctx context.Context, client kubernetes.Interface, gw gwclient.Interface, w Workload, workers int, log *slog.Logger) (CreateStats, error) {
	start := time.Now()
	c := &creator{client: client, w: w, log: log}
	if err := c.one(ctx, "namespace", func(ctx context.Context) error {
		_, err := client.CoreV1().Namespaces().Create(ctx, w.NamespaceObject(), metav1.CreateOptions{})
		return err
	}); err != nil {
		return CreateStats{}, err
	}
	if err := c.one(ctx, "IngressClass", func(ctx context.Context) error {
		_, err := client.NetworkingV1().IngressClasses().Create(ctx, IngressClass(), metav1.CreateOptions{})
		return err
	}); err != nil {
		return CreateStats{}, err
	}
	ns := w.Namespace
	phases := []struct {
		kind   string
		count  int
		create func(ctx context.Context, i int) error
	}{
		{"Services", w.Services(), func(ctx context.Context, s int) error {
			_, err := client.CoreV1().Services(ns).Create(ctx, w.Service(s), metav1.CreateOptions{})
			return err
		}},
		{"EndpointSlices", w.Services(), func(ctx context.Context, s int) error {
			_, err := client.DiscoveryV1().EndpointSlices(ns).Create(ctx, w.EndpointSlice(s, EndpointsPerSlice), metav1.CreateOptions{})
			return err
		}},
		{"Ingresses", w.N, func(ctx context.Context, i int) error {
			_, err := client.NetworkingV1().Ingresses(ns).Create(ctx, w.Ingress(i), metav1.CreateOptions{})
			return err
		}},
	}
	if w.GatewayAPI {
		if err := c.createGateway(ctx, gw); err != nil {
			return CreateStats{}, err
		}
		phases[2].kind, phases[2].count = "HTTPRoutes", w.N*HostsPerIngress
		phases[2].create = func(ctx context.Context, k int) error {
			_, err := gw.GatewayV1().HTTPRoutes(ns).Create(ctx, w.HTTPRoute(k/HostsPerIngress, k%HostsPerIngress), metav1.CreateOptions{})
			return err
		}
	}
	for _, p := range phases {
		if err := c.parallel(ctx, p.kind, p.count, workers, p.create); err != nil {
			return CreateStats{}, err
		}
	}
	took := time.Since(start)
	return CreateStats{Objects: w.Objects(), Existing: int(c.existing.Load()), Took: took, Seconds: took.Seconds()}, nil
}

type creator struct {
	client   kubernetes.Interface
	w        Workload
	log      *slog.Logger
	existing atomic.Int64
}

// one runs a single create, counting AlreadyExists as done.
func (c *creator) one(ctx context.Context, what string, create func(context.Context) error) error {
	err := create(ctx)
	if apierrors.IsAlreadyExists(err) {
		c.existing.Add(1)
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", what, err)
	}
	return nil
}

// parallel runs create(0..count-1) on workers goroutines, stopping at the
// first error. It logs progress every few seconds: creating 200,000 objects
// takes minutes, and silence looks like a hang.
func (c *creator) parallel(ctx context.Context, kind string, count, workers int, create func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count || ctx.Err() != nil {
					return
				}
				err := c.one(ctx, fmt.Sprintf("%s #%d", kind, i), func(ctx context.Context) error { return create(ctx, i) })
				if err != nil {
					cancel(err)
					return
				}
				done.Add(1)
			}
		}()
	}
	stopProgress := c.progress(kind, count, &done, start)
	wg.Wait()
	stopProgress()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	took := time.Since(start)
	c.log.Info("created", "kind", kind, "count", count, "took", took.Round(time.Millisecond),
		"perSecond", int(float64(count)/max(took.Seconds(), 1e-9)))
	return nil
}

func (c *creator) progress(kind string, count int, done *atomic.Int64, start time.Time) (stop func()) {
	ticker := time.NewTicker(10 * time.Second)
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-ticker.C:
				c.log.Info("creating", "kind", kind, "done", done.Load(), "of", count, "elapsed", time.Since(start).Round(time.Second))
			}
		}
	}()
	return func() {
		ticker.Stop()
		close(quit)
	}
}

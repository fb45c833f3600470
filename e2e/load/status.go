package load

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// statusWatch watches the workload's Ingresses and notes when the last of
// them got an address in status.loadBalancer. It watches rather than lists
// in a loop: listing 10,000 Ingresses every second would load the API
// server that the control plane is writing status through.
type statusWatch struct {
	want int

	mu     sync.Mutex
	with   map[string]bool // workload Ingress name -> has an address
	count  int
	first  time.Time // when the first Ingress got an address
	doneAt time.Time
	done   chan struct{}
}

// watchStatus starts watching the Ingresses of w's namespace and returns
// once the watch has listed them.
func watchStatus(ctx context.Context, client kubernetes.Interface, w Workload) (*statusWatch, error) {
	sw := &statusWatch{want: w.N, with: map[string]bool{}, done: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(w.Namespace))
	inf := factory.Networking().V1().Ingresses().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sw.observe,
		UpdateFunc: func(_, obj any) { sw.observe(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watching Ingress status: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("listing Ingresses for their status: %w", ctx.Err())
	}
	return sw, nil
}

func (sw *statusWatch) observe(obj any) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok || !strings.HasPrefix(ing.Name, "ing-") { // change Ingresses are not counted
		return
	}
	has := len(ing.Status.LoadBalancer.Ingress) > 0
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if has == sw.with[ing.Name] {
		return
	}
	sw.with[ing.Name] = has
	if has {
		sw.count++
		if sw.first.IsZero() {
			sw.first = time.Now()
		}
	} else {
		sw.count--
	}
	if sw.count == sw.want && sw.doneAt.IsZero() {
		sw.doneAt = time.Now()
		close(sw.done)
	}
}

// progress says how many workload Ingresses have an address now, and when
// the first got one (zero: none yet).
func (sw *statusWatch) progress() (int, time.Time) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.count, sw.first
}

// wait returns when every workload Ingress had an address, or an error
// saying how many had one when ctx ended.
func (sw *statusWatch) wait(ctx context.Context) (time.Time, error) {
	select {
	case <-sw.done:
		sw.mu.Lock()
		defer sw.mu.Unlock()
		return sw.doneAt, nil
	case <-ctx.Done():
		sw.mu.Lock()
		defer sw.mu.Unlock()
		return time.Time{}, fmt.Errorf("%d of %d Ingresses have a status address: %w", sw.count, sw.want, ctx.Err())
	}
}

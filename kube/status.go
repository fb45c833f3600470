package kube

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Limiter paces the status writes. *rate.Limiter and client-go's
// flowcontrol.RateLimiter both fit.
type Limiter interface {
	Wait(ctx context.Context) error
}

// StatusWriter keeps status.loadBalancer.ingress of every Ingress in line
// with where traffic enters: the Ingresses we own (by Filter) carry the
// addresses from Addresses; the others carry none of them.
//
// It is a controller in the usual shape: informers feed a work queue of
// Ingress names, and workers compare each Ingress with what it should be and
// patch only those that differ. Every replica runs the informers (Run) so
// that a new leader starts with warm caches; only the leader runs the
// workers (Lead).
type StatusWriter struct {
	Client    kubernetes.Interface
	Filter    ClassFilter
	Addresses AddressSource
	// Limiter paces writes so that thousands of Ingresses do not hammer
	// the API server; nil means unlimited.
	Limiter Limiter
	// Workers is how many writes may be in flight at once; 1 when zero.
	Workers int
	// Refused, when set, says whether an Ingress we own is refused by its
	// annotations, alone or under the rules of the controller ConfigMap
	// (it is not served: translate/ingress/refuse.go), which then carries
	// none of our addresses, as if not ours. configMap is the writer's
	// copy of ConfigMap, nil while it is missing or when none is named.
	Refused func(ing *networkingv1.Ingress, configMap *corev1.ConfigMap) bool
	// ConfigMap, when set, is the controller ConfigMap (serve
	// --configmap): the writer watches it for Refused, and checks every
	// Ingress again when it changes.
	ConfigMap types.NamespacedName
	// Hold, when set, holds every write back until it closes: serve
	// closes it once the first snapshot is published, so that the first
	// of thousands of writes does not compete with the informers' initial
	// lists for the API server (the writes come back to them as watch
	// events) nor with the first build for the CPU.
	Hold <-chan struct{}
	// AddressesChanged, when set, is told once the addresses are known
	// and after each change of them, after the writer has taken them:
	// serve hands them on to the Gateway API status writer, which
	// publishes the same addresses on Gateways.
	AddressesChanged func()
	Logger           *slog.Logger

	holding atomic.Bool // Lead is waiting for Hold: tests read it

	synced chan struct{} // closed once the caches and addresses are known

	ingresses  networkinglisters.IngressLister
	classes    networkinglisters.IngressClassLister
	configMaps cache.Store // ConfigMap alone; nil when unset

	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[cache.ObjectName] // nil unless leading

	writes atomic.Int64
}

// NewStatusWriter returns a StatusWriter; see the fields for the arguments.
func NewStatusWriter(client kubernetes.Interface, filter ClassFilter, addresses AddressSource, limiter Limiter, workers int, logger *slog.Logger) *StatusWriter {
	if workers < 1 {
		workers = 1
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &StatusWriter{
		Client: client, Filter: filter, Addresses: addresses, Limiter: limiter, Workers: workers, Logger: logger,
		synced: make(chan struct{}),
	}
}

// Run watches Ingresses, IngressClasses and the addresses until ctx is done.
// It writes nothing: see Lead.
func (w *StatusWriter) Run(ctx context.Context) error {
	// The writer's own informers, trimmed to what ownership and status need,
	// rather than the translator's: they live on every replica for the
	// process's lifetime and must see Ingresses we do not own, to take our
	// address off those that used to be ours.
	factory := informers.NewSharedInformerFactoryWithOptions(w.Client, 0,
		informers.WithTransform(w.trim))
	ingInformer := factory.Networking().V1().Ingresses().Informer()
	classInformer := factory.Networking().V1().IngressClasses().Informer()
	w.ingresses = factory.Networking().V1().Ingresses().Lister()
	w.classes = factory.Networking().V1().IngressClasses().Lister()

	if _, err := ingInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.enqueue,
		UpdateFunc: func(_, obj any) { w.enqueue(obj) },
		// A deleted Ingress has no status left to fix.
	}); err != nil {
		return fmt.Errorf("adding ingress event handler: %w", err)
	}
	// A class change can change the owner of any Ingress.
	all := func(any) { w.enqueueAll() }
	if _, err := classInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: all, UpdateFunc: func(_, obj any) { all(obj) }, DeleteFunc: all,
	}); err != nil {
		return fmt.Errorf("adding ingressclass event handler: %w", err)
	}

	synced := []cache.InformerSynced{ingInformer.HasSynced, classInformer.HasSynced}
	if w.ConfigMap.Name != "" {
		// Its rules can refuse any Ingress (Refused): a change checks
		// every one again.
		cmInformer := cache.NewSharedIndexInformer(w.configMapWatch(), &corev1.ConfigMap{}, 0, cache.Indexers{})
		if _, err := cmInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: all, UpdateFunc: func(_, obj any) { all(obj) }, DeleteFunc: all,
		}); err != nil {
			return fmt.Errorf("adding configmap event handler: %w", err)
		}
		w.configMaps = cmInformer.GetStore()
		go cmInformer.RunWithContext(ctx)
		synced = append(synced, cmInformer.HasSynced)
	}

	factory.Start(ctx.Done())
	defer factory.Shutdown()

	addressesKnown := make(chan struct{})
	var once sync.Once
	addrErr := make(chan error, 1)
	go func() {
		addrErr <- w.Addresses.Run(ctx, func() {
			once.Do(func() { close(addressesKnown) })
			w.enqueueAll()
			if w.AddressesChanged != nil {
				w.AddressesChanged()
			}
		})
	}()
	wrap := func(err error) error {
		if err != nil {
			return fmt.Errorf("status addresses: %w", err)
		}
		return nil
	}

	// WaitForCacheSync gives up only when ctx is done, and then the
	// address source returns too.
	if cache.WaitForCacheSync(ctx.Done(), synced...) {
		select {
		case <-addressesKnown:
			close(w.synced)
			w.Logger.Info("status writer synced", "addresses", formatAddresses(w.Addresses.Addresses()))
		case err := <-addrErr:
			return wrap(err)
		}
	}
	return wrap(<-addrErr)
}

// Lead writes status until ctx is done; run it while holding the leader
// lease. It waits for Run to sync, checks every Ingress, then follows
// changes.
func (w *StatusWriter) Lead(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-w.synced:
	}
	if ctx.Err() != nil {
		return // the select picks at random when both are ready
	}
	if !w.waitHold(ctx) {
		return
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[cache.ObjectName](),
		workqueue.TypedRateLimitingQueueConfig[cache.ObjectName]{Name: "ingress-status"})
	// Whatever happened while we were not leading, and whatever the last
	// leader left half done, is caught up by looking at everything once.
	w.installQueue(queue)
	w.Logger.Info("writing ingress status", "workers", w.Workers)
	failed := func(key cache.ObjectName, err error) {
		w.Logger.Error("writing ingress status; will retry", "ingress", key.String(), "err", err)
	}
	serveQueue(ctx, w.Workers, queue, w.sync, failed, func() {
		w.mu.Lock()
		if w.queue == queue {
			w.queue = nil
		}
		w.mu.Unlock()
	})
	w.Logger.Info("stopped writing ingress status")
}

// serveQueue runs a status writer's workers, each syncing the keys it
// takes off queue, until ctx ends; then detach stops new keys from being
// queued, the queue is shut down and the workers are waited for. A key
// whose sync fails is tried again later: at once after a Conflict (our
// cached copy was stale, and the informer is about to bring the new one),
// after failed is told otherwise; never once ctx has ended (leadership
// lost or shutting down: the next leader looks again).
func serveQueue[K comparable](ctx context.Context, workers int, queue workqueue.TypedRateLimitingInterface[K],
	syncKey func(context.Context, K) error, failed func(K, error), detach func()) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				key, shutdown := queue.Get()
				if shutdown {
					return
				}
				err := syncKey(ctx, key)
				switch {
				case err == nil:
					queue.Forget(key)
				case ctx.Err() != nil:
				case apierrors.IsConflict(err):
					queue.AddRateLimited(key)
				default:
					failed(key, err)
					queue.AddRateLimited(key)
				}
				queue.Done(key)
			}
		})
	}
	<-ctx.Done()
	detach()
	queue.ShutDown()
	wg.Wait()
}

// Writes returns how many status patches the writer has made, for tests and
// logs.
func (w *StatusWriter) Writes() int64 { return w.writes.Load() }

func (w *StatusWriter) enqueue(obj any) {
	key, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue != nil {
		w.queue.Add(key)
	}
}

func (w *StatusWriter) enqueueAll() { w.addAll(nil) }

// installQueue starts a term: it makes queue the one events go to and puts
// every Ingress in it, in one step, so that every Ingress that exists when
// the term starts is queued before any later event.
func (w *StatusWriter) installQueue(queue workqueue.TypedRateLimitingInterface[cache.ObjectName]) {
	w.addAll(queue)
}

func (w *StatusWriter) addAll(install workqueue.TypedRateLimitingInterface[cache.ObjectName]) {
	if w.ingresses == nil {
		return
	}
	all, err := w.ingresses.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if install != nil {
		w.queue = install
	}
	if w.queue == nil {
		return
	}
	for _, ing := range all {
		w.queue.Add(cache.MetaObjectToName(ing))
	}
}

// configMapWatch lists and watches the controller ConfigMap alone.
func (w *StatusWriter) configMapWatch() cache.ListerWatcher {
	return cache.NewFilteredListWatchFromClient(w.Client.CoreV1().RESTClient(), "configmaps", w.ConfigMap.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", w.ConfigMap.Name).String()
	})
}

// configMap is the writer's copy of the controller ConfigMap; nil while
// it is missing, or when none is named.
func (w *StatusWriter) configMap() *corev1.ConfigMap {
	if w.configMaps == nil {
		return nil
	}
	obj, ok, err := w.configMaps.GetByKey(w.ConfigMap.String())
	if err != nil || !ok {
		return nil
	}
	cm, _ := obj.(*corev1.ConfigMap)
	return cm
}

// sync brings one Ingress's status in line.
func (w *StatusWriter) sync(ctx context.Context, key cache.ObjectName) error {
	ing, err := w.ingresses.Ingresses(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	classes, err := w.classes.List(labels.Everything())
	if err != nil {
		return err
	}
	owned := len(w.Filter.Owned([]*networkingv1.Ingress{ing}, classes)) == 1
	if owned && w.Refused != nil && w.Refused(ing, w.configMap()) {
		owned = false // not served: no address says it is
	}
	current := ing.Status.LoadBalancer.Ingress
	want := desiredStatus(current, w.Addresses.Addresses(), owned)
	if sameAddresses(current, want) {
		return nil
	}
	if w.Limiter != nil {
		if err := w.Limiter.Wait(ctx); err != nil {
			return fmt.Errorf("waiting for the rate limiter: %w", err)
		}
	}
	start := time.Now()
	if err := patchStatus(ctx, w.Client, ing, want); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return err
	}
	w.writes.Add(1)
	w.Logger.Debug("wrote ingress status", "ingress", key.String(), "owned", owned,
		"addresses", formatAddresses(want), "took", time.Since(start).Round(time.Microsecond))
	return nil
}

// desiredStatus is what an Ingress's status.loadBalancer.ingress should be:
// exactly our addresses when we own it; otherwise what it has, minus our
// addresses, so that an Ingress that stops being ours loses our address and
// keeps whatever its new controller wrote.
func desiredStatus(current, ours []networkingv1.IngressLoadBalancerIngress, owned bool) []networkingv1.IngressLoadBalancerIngress {
	if owned {
		return ours
	}
	var out []networkingv1.IngressLoadBalancerIngress
	for _, c := range current {
		mine := false
		for _, o := range ours {
			if c.IP == o.IP && c.Hostname == o.Hostname {
				mine = true
				break
			}
		}
		if !mine {
			out = append(out, c)
		}
	}
	return out
}

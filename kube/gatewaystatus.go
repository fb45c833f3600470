package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// GatewayStatuses is the Gateway API status one build of the front-end
// (translate/gatewayapi) computed, keyed by namespace/name: what the
// Gateway API status writer is to publish. Conditions carry the
// generation they were computed from and no transition time (the
// writer keeps or sets it); Gateways carry no addresses (the writer adds
// the Envoys'). The pipeline hands it over after each build, so that
// kube never asks the front-end anything.
type GatewayStatuses struct {
	Gateways   map[string]gwapiv1.GatewayStatus
	HTTPRoutes map[string]gwapiv1.HTTPRouteStatus
	GRPCRoutes map[string]gwapiv1.GRPCRouteStatus
	TLSRoutes  map[string]gwapiv1.TLSRouteStatus
	// BackendTLSPolicies are the policies' status.ancestors of ours.
	BackendTLSPolicies map[string]gwapiv1.PolicyStatus
	// HTTPRoutesSince, when set, is the map HTTPRoutes was made from,
	// and HTTPRoutesChanged the HTTPRoutes whose entries may differ from
	// it: every other entry is the same. Handed over after the map the
	// writer holds, they spare it a comparison of every entry.
	HTTPRoutesSince   map[string]gwapiv1.HTTPRouteStatus
	HTTPRoutesChanged []string
	// OwnPorts are, for the Gateways served on Envoy ports of their own,
	// each listener port's Envoy port, by namespace/name: what their
	// Services send each port to (GatewayServices).
	OwnPorts map[string]map[uint32]uint32
}

// The kinds whose status the writer keeps.
const (
	kindGatewayClass     = "GatewayClass"
	kindGateway          = "Gateway"
	kindHTTPRoute        = "HTTPRoute"
	kindGRPCRoute        = "GRPCRoute"
	kindTLSRoute         = "TLSRoute"
	kindBackendTLSPolicy = "BackendTLSPolicy"
)

// gatewayStatusKey is one object whose status is to be looked at.
type gatewayStatusKey struct {
	kind string
	name cache.ObjectName
}

// GatewayStatusWriter writes the status of Gateway API objects, as
// StatusWriter does Ingresses': every GatewayClass whose controllerName
// is ours Accepted; each of our Gateways' conditions, listeners and
// addresses (the Envoys', from the same AddressSource as the Ingresses');
// each HTTPRoute's, GRPCRoute's and TLSRoute's status.parents entries of our
// controller, leaving other controllers' entries as they are.
//
// What a Gateway or a Route should say is computed by the front-end and
// handed in with Update; the writer only merges it into what the object
// carries, by the specification's rules (setConditions, mergeParents),
// and writes what differs. Every replica runs Run (event handlers on the
// cluster source's Gateway API informers); only the leader runs Lead.
type GatewayStatusWriter struct {
	Client gwclient.Interface
	// ControllerName is our GatewayClasses' spec.controllerName, and the
	// controllerName of the Route parent entries that are ours.
	ControllerName string
	// Informers are the cluster source's (shared: the writer adds event
	// handlers, reads their stores, and never starts them).
	Informers GatewayInformers
	// Addresses, when set, are what the Gateways' status.addresses carry;
	// call AddressesChanged once they are known and after each change.
	Addresses AddressSource
	// Limiter paces writes (nil: unlimited); Workers writes may be in
	// flight at once (1 when zero); Hold holds the writes back until it
	// closes, as StatusWriter's do.
	Limiter Limiter
	Workers int
	Hold    <-chan struct{}
	Logger  *slog.Logger
	// SupportedFeatures are what our GatewayClasses' status lists (the
	// front-end's: gatewayapi.SupportedFeatures), sorted by name.
	SupportedFeatures []gwapiv1.SupportedFeature
	// Services, when set, keeps the Services of the Gateways served on
	// ports of their own (GatewayStatuses.OwnPorts), whose addresses are
	// then those Gateways' status.addresses.
	Services *GatewayServices

	servicesFor map[string]GatewayService // what the Services were last synced to; guarded by mu

	holding atomic.Bool

	synced, addressesKnown, computed chan struct{}
	addressesOnce, computedOnce      sync.Once

	mu      sync.Mutex
	desired *GatewayStatuses // the last Update's; nil before one
	queue   workqueue.TypedRateLimitingInterface[gatewayStatusKey]

	writes atomic.Int64
}

// NewGatewayStatusWriter returns a writer; see the fields for the
// arguments. Without addresses (nil), Gateways carry none.
func NewGatewayStatusWriter(client gwclient.Interface, controllerName string, informers GatewayInformers, addresses AddressSource, limiter Limiter, workers int, logger *slog.Logger) *GatewayStatusWriter {
	w := &GatewayStatusWriter{
		Client: client, ControllerName: controllerName, Informers: informers, Addresses: addresses,
		Limiter: limiter, Workers: max(workers, 1), Logger: loggerOr(logger),
		synced: make(chan struct{}), addressesKnown: make(chan struct{}), computed: make(chan struct{}),
	}
	if addresses == nil {
		w.addressesOnce.Do(func() { close(w.addressesKnown) })
	}
	return w
}

// informer is the informer of a kind (nil when it is not served).
func (w *GatewayStatusWriter) informer(kind string) cache.SharedIndexInformer {
	switch kind {
	case kindGatewayClass:
		return w.Informers.GatewayClasses
	case kindGateway:
		return w.Informers.Gateways
	case kindHTTPRoute:
		return w.Informers.HTTPRoutes
	case kindGRPCRoute:
		return w.Informers.GRPCRoutes
	case kindTLSRoute:
		return w.Informers.TLSRoutes
	case kindBackendTLSPolicy:
		return w.Informers.BackendTLSPolicies
	}
	return nil
}

func statusKinds() []string {
	return []string{kindGatewayClass, kindGateway, kindHTTPRoute, kindGRPCRoute, kindTLSRoute, kindBackendTLSPolicy}
}

// Run follows the objects until ctx is done: every event, a status
// write's included (ours come back this way, and compare equal), puts
// the object in the queue while leading. It writes nothing: see Lead.
func (w *GatewayStatusWriter) Run(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, kind := range statusKinds() {
		inf := w.informer(kind)
		if inf == nil {
			continue
		}
		reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { w.enqueue(kind, obj) },
			UpdateFunc: func(_, obj any) { w.enqueue(kind, obj) },
			// A deleted object has no status left to write.
		})
		if err != nil {
			return fmt.Errorf("adding %s event handler: %w", kind, err)
		}
		defer func() { _ = inf.RemoveEventHandler(reg) }()
		synced = append(synced, reg.HasSynced)
	}
	if cache.WaitForCacheSync(ctx.Done(), synced...) {
		close(w.synced)
	}
	<-ctx.Done()
	return nil
}

// Update hands over what the front-end's last build computed. The
// objects whose computed status changed are looked at again.
func (w *GatewayStatusWriter) Update(s GatewayStatuses) {
	w.mu.Lock()
	old := w.desired
	w.desired = &s
	if w.queue != nil && old != nil {
		enqueueChanged(w.queue, kindGateway, old.Gateways, s.Gateways, nil, nil)
		enqueueChanged(w.queue, kindHTTPRoute, old.HTTPRoutes, s.HTTPRoutes, s.HTTPRoutesSince, s.HTTPRoutesChanged)
		enqueueChanged(w.queue, kindGRPCRoute, old.GRPCRoutes, s.GRPCRoutes, nil, nil)
		enqueueChanged(w.queue, kindTLSRoute, old.TLSRoutes, s.TLSRoutes, nil, nil)
		enqueueChanged(w.queue, kindBackendTLSPolicy, old.BackendTLSPolicies, s.BackendTLSPolicies, nil, nil)
	}
	w.mu.Unlock()
	w.computedOnce.Do(func() { close(w.computed) })
}

// AddressesChanged says the Addresses are known, or changed: every
// Gateway is looked at again.
func (w *GatewayStatusWriter) AddressesChanged() {
	w.addressesOnce.Do(func() { close(w.addressesKnown) })
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue != nil {
		w.addKind(w.queue, kindGateway)
	}
}

// Writes returns how many status writes the writer has made.
func (w *GatewayStatusWriter) Writes() int64 { return w.writes.Load() }

// Lead writes status until ctx is done; run it while holding the leader
// lease. It waits for the informers, the addresses and a first build's
// status (before one, nothing says which Route parents are ours: writing
// then would take them all off), and Hold; then looks at every object
// once and follows changes.
func (w *GatewayStatusWriter) Lead(ctx context.Context) {
	for _, ready := range []<-chan struct{}{w.synced, w.addressesKnown, w.computed} {
		select {
		case <-ctx.Done():
			return
		case <-ready:
		}
	}
	if ctx.Err() != nil || !waitHold(ctx, w.Hold, &w.holding, w.Logger, "gateway API status") {
		return
	}
	if w.Services != nil {
		err := w.Services.Watch(ctx, func(gateway string) {
			name, err := cache.ParseObjectName(gateway)
			if err != nil {
				return
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.queue != nil {
				w.queue.Add(gatewayStatusKey{kind: kindGateway, name: name})
			}
		})
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Error("not writing gateway API status", "err", err)
			}
			return
		}
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[gatewayStatusKey](),
		workqueue.TypedRateLimitingQueueConfig[gatewayStatusKey]{Name: "gateway-status"})
	w.mu.Lock()
	w.queue = queue
	for _, kind := range statusKinds() {
		w.addKind(queue, kind)
	}
	w.mu.Unlock()
	w.Logger.Info("writing gateway API status", "workers", w.Workers)
	failed := func(key gatewayStatusKey, err error) {
		w.Logger.Error("writing gateway API status; will retry", "kind", key.kind, "name", key.name.String(), "err", err)
	}
	serveQueue(ctx, w.Workers, queue, w.sync, failed, func() { // status.go
		w.mu.Lock()
		if w.queue == queue {
			w.queue = nil
		}
		w.mu.Unlock()
	})
	w.Logger.Info("stopped writing gateway API status")
}

func (w *GatewayStatusWriter) enqueue(kind string, obj any) {
	name, err := cache.ObjectToName(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.queue != nil {
		w.queue.Add(gatewayStatusKey{kind: kind, name: name})
	}
}

// addKind queues every object of a kind; w.mu is held.
func (w *GatewayStatusWriter) addKind(queue workqueue.TypedRateLimitingInterface[gatewayStatusKey], kind string) {
	inf := w.informer(kind)
	if inf == nil {
		return
	}
	for _, key := range inf.GetStore().ListKeys() {
		name, err := cache.ParseObjectName(key)
		if err != nil {
			utilruntime.HandleError(err)
			continue
		}
		queue.Add(gatewayStatusKey{kind: kind, name: name})
	}
}

// enqueueChanged queues the objects of a kind whose computed status
// differs between two builds (one that came or went included). When
// next was made from old (since is old), changed says which entries may
// differ, and those alone are queued.
func enqueueChanged[V any](queue workqueue.TypedRateLimitingInterface[gatewayStatusKey], kind string, old, next, since map[string]V, changed []string) {
	if len(old) == 0 && len(next) == 0 {
		return
	}
	sameMap := func(a, b map[string]V) bool {
		return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if sameMap(old, next) {
		return // the very same map: the front-end hands it out again while nothing changed
	}
	add := func(key string) {
		if name, err := cache.ParseObjectName(key); err == nil {
			queue.Add(gatewayStatusKey{kind: kind, name: name})
		}
	}
	if sameMap(old, since) {
		for _, key := range changed {
			add(key)
		}
		return
	}
	for key, v := range next {
		if o, ok := old[key]; !ok || !apiequality.Semantic.DeepEqual(o, v) {
			add(key)
		}
	}
	for key := range old {
		if _, ok := next[key]; !ok {
			add(key)
		}
	}
}

// sync brings one object's status in line with what it should say.
func (w *GatewayStatusWriter) sync(ctx context.Context, key gatewayStatusKey) error {
	inf := w.informer(key.kind)
	if inf == nil {
		return nil
	}
	obj, exists, err := inf.GetStore().GetByKey(key.name.String())
	if err != nil || !exists {
		return err
	}
	w.mu.Lock()
	desired := w.desired
	w.mu.Unlock()
	if desired == nil {
		return nil
	}
	name := key.name.String()
	var write func() error
	switch o := obj.(type) {
	case *gwapiv1.GatewayClass:
		if string(o.Spec.ControllerName) != w.ControllerName {
			return nil // another controller's
		}
		next := o.DeepCopy()
		changed := setConditions(&next.Status.Conditions, []metav1.Condition{{
			Type: string(gwapiv1.GatewayClassConditionStatusAccepted), Status: metav1.ConditionTrue,
			Reason: string(gwapiv1.GatewayClassReasonAccepted), Message: "handled by " + w.ControllerName, ObservedGeneration: o.Generation,
		}})
		if !slices.Equal(next.Status.SupportedFeatures, w.SupportedFeatures) {
			next.Status.SupportedFeatures = slices.Clone(w.SupportedFeatures)
			changed = true
		}
		if !changed {
			return nil
		}
		write = func() error {
			_, err := w.Client.GatewayV1().GatewayClasses().UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	case *gwapiv1.Gateway:
		want, ok := desired.Gateways[name]
		if !ok {
			return nil // not ours: its controller's to write
		}
		addresses := gatewayAddresses(w.Addresses)
		if w.Services != nil {
			// Each Gateway on an address of its own: a Gateway not
			// accepted has no Service (OwnPorts leaves it out), and so
			// no address.
			if err := w.syncServices(ctx, desired); err != nil {
				return err
			}
			addresses = nil
			if _, own := desired.OwnPorts[name]; own {
				var pending string
				var err error
				if addresses, pending, err = w.ownAddresses(name); err != nil {
					return err
				}
				if pending != "" {
					want = addressNotAssigned(want, pending)
				} else {
					addresses, want = staticAddresses(o.Spec.Addresses, addresses, want)
				}
			}
		} else if w.Addresses != nil {
			addresses, want = staticAddresses(o.Spec.Addresses, addresses, want)
		}
		status, changed := mergeGatewayStatus(o.Status, want, addresses)
		if !changed {
			return nil
		}
		next := o.DeepCopy()
		next.Status = status
		write = func() error {
			_, err := w.Client.GatewayV1().Gateways(o.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	case *gwapiv1.HTTPRoute:
		parents, changed := mergeParents(o.Status.Parents, desired.HTTPRoutes[name].Parents, w.ControllerName, o.Namespace)
		if !changed {
			return nil
		}
		next := o.DeepCopy()
		next.Status.Parents = parents
		write = func() error {
			_, err := w.Client.GatewayV1().HTTPRoutes(o.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	case *gwapiv1.GRPCRoute:
		parents, changed := mergeParents(o.Status.Parents, desired.GRPCRoutes[name].Parents, w.ControllerName, o.Namespace)
		if !changed {
			return nil
		}
		next := o.DeepCopy()
		next.Status.Parents = parents
		write = func() error {
			_, err := w.Client.GatewayV1().GRPCRoutes(o.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	case *gwapiv1.TLSRoute:
		parents, changed := mergeParents(o.Status.Parents, desired.TLSRoutes[name].Parents, w.ControllerName, o.Namespace)
		if !changed {
			return nil
		}
		next := o.DeepCopy()
		next.Status.Parents = parents
		write = func() error {
			_, err := w.Client.GatewayV1().TLSRoutes(o.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	case *gwapiv1.BackendTLSPolicy:
		ancestors, changed := mergeAncestors(o.Status.Ancestors, desired.BackendTLSPolicies[name].Ancestors, w.ControllerName, o.Namespace)
		if !changed {
			return nil
		}
		next := o.DeepCopy()
		next.Status.Ancestors = ancestors
		write = func() error {
			_, err := w.Client.GatewayV1().BackendTLSPolicies(o.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
			return err
		}
	default:
		return nil
	}
	if w.Limiter != nil {
		if err := w.Limiter.Wait(ctx); err != nil {
			return fmt.Errorf("waiting for the rate limiter: %w", err)
		}
	}
	start := time.Now()
	// An update of the status subresource: the API server takes only the
	// status of it (the rest of our trimmed copy is ignored), and the
	// resourceVersion makes it conditional, so that a status another
	// controller wrote since is never overwritten unseen (Conflict).
	if err := write(); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("writing status of %s %s: %w", key.kind, name, err)
	}
	w.writes.Add(1)
	w.Logger.Debug("wrote gateway API status", "kind", key.kind, "name", name, "took", time.Since(start).Round(time.Microsecond))
	return nil
}

// setConditions merges want into conds as meta.SetStatusCondition does:
// a condition whose status is unchanged keeps its lastTransitionTime, one
// whose status changed (or that is new) takes now, and conditions of
// other types stay as and where they are (the specification: never
// remove or reorder a condition one is not responsible for). A condition
// already observed at a newer generation than want's is left alone: our
// copy is stale, and a later build brings the newer one. It reports
// whether anything but a transition time changed.
func setConditions(conds *[]metav1.Condition, want []metav1.Condition) bool {
	changed := false
	for _, c := range want {
		if cur := meta.FindStatusCondition(*conds, c.Type); cur != nil && cur.ObservedGeneration > c.ObservedGeneration {
			continue
		}
		c.LastTransitionTime = metav1.Time{} // SetStatusCondition's: now, when the status changes
		if meta.SetStatusCondition(conds, c) {
			changed = true
		}
	}
	return changed
}

// removableGatewayConditions are the Gateway conditions of ours that are
// present only while they hold.
var removableGatewayConditions = []string{string(gwapiv1.GatewayConditionInsecureFrontendValidationMode), string(gwapiv1.GatewayConditionResolvedRefs)}

// mergeGatewayStatus is a Gateway's status with want (the front-end's)
// merged in: its conditions by setConditions, its listeners as want lists
// them (each listener's conditions merged into those of the listener of
// that name), and addresses. It reports whether that differs from
// current by more than transition times.
func mergeGatewayStatus(current, want gwapiv1.GatewayStatus, addresses []gwapiv1.GatewayStatusAddress) (gwapiv1.GatewayStatus, bool) {
	next := *current.DeepCopy()
	changed := setConditions(&next.Conditions, want.Conditions)
	// A condition of ours that the front-end writes only while it holds
	// is taken off when want lacks it: the specification removes
	// InsecureFrontendValidationMode once no validation allows an
	// insecure fallback, and ResolvedRefs (of tls.backend's client
	// certificate) goes with the reference.
	for _, t := range removableGatewayConditions {
		if meta.FindStatusCondition(want.Conditions, t) == nil && meta.RemoveStatusCondition(&next.Conditions, t) {
			changed = true
		}
	}

	listeners := make([]gwapiv1.ListenerStatus, 0, len(want.Listeners))
	for _, l := range want.Listeners {
		ls := *l.DeepCopy()
		var conds []metav1.Condition
		for _, c := range current.Listeners {
			if c.Name == l.Name {
				conds = append(conds, c.Conditions...)
				break
			}
		}
		setConditions(&conds, l.Conditions)
		ls.Conditions = conds
		listeners = append(listeners, ls)
	}
	if !sameListeners(current.Listeners, listeners) {
		changed = true
	}
	next.Listeners = listeners

	if !apiequality.Semantic.DeepEqual(current.Addresses, addresses) {
		changed = true
	}
	next.Addresses = addresses
	return next, changed
}

func sameListeners(a, b []gwapiv1.ListenerStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].AttachedRoutes != b[i].AttachedRoutes ||
			!apiequality.Semantic.DeepEqual(a[i].SupportedKinds, b[i].SupportedKinds) ||
			!sameConditions(a[i].Conditions, b[i].Conditions) {
			return false
		}
	}
	return true
}

// sameConditions compares conditions in order, transition times aside.
func sameConditions(a, b []metav1.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.LastTransitionTime, y.LastTransitionTime = metav1.Time{}, metav1.Time{}
		if x != y {
			return false
		}
	}
	return true
}

// mergeParents is a Route's status.parents with want (the front-end's
// entries, every one of controller) in place of controller's: the
// entries of other controllers stay as and where they are (the
// specification: an implementation touches only its own), ours follow
// them in want's order, each keeping the conditions (and their
// transition times) of our current entry for the same parent. It reports
// whether our entries changed by more than transition times; when they
// did not, it returns current.
func mergeParents(current, want []gwapiv1.RouteParentStatus, controller, namespace string) ([]gwapiv1.RouteParentStatus, bool) {
	var others, ours []gwapiv1.RouteParentStatus
	for _, p := range current {
		if string(p.ControllerName) == controller {
			ours = append(ours, p)
		} else {
			others = append(others, p)
		}
	}
	merged := make([]gwapiv1.RouteParentStatus, 0, len(want))
	for _, p := range want {
		ps := *p.DeepCopy()
		ps.ControllerName = gwapiv1.GatewayController(controller)
		ps.ParentRef = defaultedParentRef(ps.ParentRef)
		var conds []metav1.Condition
		for _, o := range ours {
			if sameParent(o.ParentRef, ps.ParentRef, namespace) {
				conds = append(conds, o.Conditions...)
				break
			}
		}
		setConditions(&conds, p.Conditions)
		ps.Conditions = conds
		merged = append(merged, ps)
	}
	if sameParents(ours, merged) {
		return current, false
	}
	// Never nil: the CRDs require status.parents, so a Route left with no
	// entry at all is written an empty list, not null, which the API
	// server refuses.
	return append(append(make([]gwapiv1.RouteParentStatus, 0, len(others)+len(merged)), others...), merged...), true
}

// mergeAncestors is mergeParents for a policy's status.ancestors, whose
// entries are a Route's parent entries by another name.
func mergeAncestors(current, want []gwapiv1.PolicyAncestorStatus, controller, namespace string) ([]gwapiv1.PolicyAncestorStatus, bool) {
	asParents := func(as []gwapiv1.PolicyAncestorStatus) []gwapiv1.RouteParentStatus {
		out := make([]gwapiv1.RouteParentStatus, len(as))
		for i, a := range as {
			out[i] = gwapiv1.RouteParentStatus{ParentRef: a.AncestorRef, ControllerName: a.ControllerName, Conditions: a.Conditions}
		}
		return out
	}
	merged, changed := mergeParents(asParents(current), asParents(want), controller, namespace)
	if !changed {
		return current, false
	}
	out := make([]gwapiv1.PolicyAncestorStatus, len(merged))
	for i, p := range merged {
		out[i] = gwapiv1.PolicyAncestorStatus{AncestorRef: p.ParentRef, ControllerName: p.ControllerName, Conditions: p.Conditions}
	}
	return out, true
}

// defaultedParentRef is ref with the group and kind the API server
// defaults them to, so that what is written reads back the same.
func defaultedParentRef(ref gwapiv1.ParentReference) gwapiv1.ParentReference {
	if ref.Group == nil {
		g := gwapiv1.Group(gwapiv1.GroupName)
		ref.Group = &g
	}
	if ref.Kind == nil {
		k := gwapiv1.Kind(kindGateway)
		ref.Kind = &k
	}
	return ref
}

// sameParent says whether two parentRefs of a Route of namespace name the
// same parent (and section and port).
func sameParent(a, b gwapiv1.ParentReference, namespace string) bool {
	a, b = defaultedParentRef(a), defaultedParentRef(b)
	ns := gwapiv1.Namespace(namespace)
	if a.Namespace == nil {
		a.Namespace = &ns
	}
	if b.Namespace == nil {
		b.Namespace = &ns
	}
	return apiequality.Semantic.DeepEqual(a, b)
}

func sameParents(a, b []gwapiv1.RouteParentStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ControllerName != b[i].ControllerName || !apiequality.Semantic.DeepEqual(a[i].ParentRef, b[i].ParentRef) ||
			!sameConditions(a[i].Conditions, b[i].Conditions) {
			return false
		}
	}
	return true
}

// syncServices brings the Services of the Gateways on ports of their own
// to the build's OwnPorts, when they changed since the last sync.
func (w *GatewayStatusWriter) syncServices(ctx context.Context, desired *GatewayStatuses) error {
	want := w.ownServices(desired.OwnPorts)
	w.mu.Lock()
	stale := !sameOwnServices(w.servicesFor, want)
	w.mu.Unlock()
	if !stale {
		return nil
	}
	if err := w.Services.Sync(ctx, want); err != nil {
		return err
	}
	w.mu.Lock()
	w.servicesFor = want
	w.mu.Unlock()
	return nil
}

// ownAddresses are the addresses of a Gateway served on ports of its own:
// its Service's; pending says what they wait for (Services.Watch queues
// the Gateway again when its Service or endpoints change).
func (w *GatewayStatusWriter) ownAddresses(name string) ([]gwapiv1.GatewayStatusAddress, string, error) {
	values, pending, err := w.Services.Addresses(name)
	if err != nil || pending != "" {
		return nil, pending, err
	}
	var out []gwapiv1.GatewayStatusAddress
	for _, a := range values {
		t := gwapiv1.IPAddressType
		if net.ParseIP(a) == nil {
			t = gwapiv1.HostnameAddressType
		}
		out = append(out, gwapiv1.GatewayStatusAddress{Type: &t, Value: a})
	}
	return out, "", nil
}

// addressNotAssigned is want with Programmed false for the reason the
// specification names while a Gateway has no address yet.
func addressNotAssigned(want gwapiv1.GatewayStatus, pending string) gwapiv1.GatewayStatus {
	want = *want.DeepCopy()
	for i, c := range want.Conditions {
		if c.Type == string(gwapiv1.GatewayConditionProgrammed) && c.Status == metav1.ConditionTrue {
			want.Conditions[i].Status = metav1.ConditionFalse
			want.Conditions[i].Reason = string(gwapiv1.GatewayReasonAddressNotAssigned)
			want.Conditions[i].Message = "waiting for an address: " + pending
		}
	}
	return want
}

// ownServices are the Services of the Gateways on ports of their own:
// their ports, and the IP addresses their spec.addresses ask for (read
// here rather than carried by the build: only the Services need them).
func (w *GatewayStatusWriter) ownServices(ports map[string]map[uint32]uint32) map[string]GatewayService {
	out := make(map[string]GatewayService, len(ports))
	for name, p := range ports {
		gs := GatewayService{Ports: p}
		if w.Informers.Gateways == nil {
			out[name] = gs
			continue
		}
		if obj, ok, _ := w.Informers.Gateways.GetStore().GetByKey(name); ok {
			if gw, ok := obj.(*gwapiv1.Gateway); ok {
				if inf := gw.Spec.Infrastructure; inf != nil {
					for k, v := range inf.Labels {
						gs.Labels = setKey(gs.Labels, string(k), string(v))
					}
					for k, v := range inf.Annotations {
						gs.Annotations = setKey(gs.Annotations, string(k), string(v))
					}
				}
				for _, a := range gw.Spec.Addresses {
					if (a.Type == nil || *a.Type == gwapiv1.IPAddressType) && net.ParseIP(a.Value) != nil {
						gs.Addresses = append(gs.Addresses, a.Value)
					}
				}
			}
		}
		out[name] = gs
	}
	return out
}

// setKey sets m[k] = v, making m if need be.
func setKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// sameOwnServices says whether two syncs' Services are alike.
func sameOwnServices(a, b map[string]GatewayService) bool {
	return maps.EqualFunc(a, b, func(x, y GatewayService) bool {
		return maps.Equal(x.Ports, y.Ports) && slices.Equal(x.Addresses, y.Addresses) &&
			maps.Equal(x.Labels, y.Labels) && maps.Equal(x.Annotations, y.Annotations)
	})
}

// gatewayAddresses are the Envoys' addresses (the Ingresses' status
// addresses) as a Gateway's status.addresses; none without a source.
func gatewayAddresses(source AddressSource) []gwapiv1.GatewayStatusAddress {
	if source == nil {
		return nil
	}
	var out []gwapiv1.GatewayStatusAddress
	for _, a := range source.Addresses() {
		if a.IP != "" {
			if _, err := netip.ParseAddr(a.IP); err == nil {
				t := gwapiv1.IPAddressType
				out = append(out, gwapiv1.GatewayStatusAddress{Type: &t, Value: a.IP})
			}
			continue
		}
		if a.Hostname != "" {
			t := gwapiv1.HostnameAddressType
			out = append(out, gwapiv1.GatewayStatusAddress{Type: &t, Value: a.Hostname})
		}
	}
	return out
}

// staticAddresses applies a Gateway's spec.addresses of a value to what
// is written for it: each must be one of the Envoys' addresses (every
// Envoy serves every Gateway, so a Gateway may pin one of them, a node's
// address or the load balancer's, but no other), and status.addresses
// lists those asked for rather than every Envoy's. One that is not the
// Envoys' leaves the Gateway not Programmed (AddressNotUsable), as the
// specification says, and out of status.addresses. The front-end refuses
// an address of another type (UnsupportedAddress); one of a type and no
// value gets the Envoys' (GatewayAddressEmpty).
func staticAddresses(spec []gwapiv1.GatewaySpecAddress, envoys []gwapiv1.GatewayStatusAddress, want gwapiv1.GatewayStatus) ([]gwapiv1.GatewayStatusAddress, gwapiv1.GatewayStatus) {
	var asked, usable []gwapiv1.GatewayStatusAddress
	var unusable []string
	for _, a := range spec {
		t := gwapiv1.IPAddressType
		if a.Type != nil {
			t = *a.Type
		}
		if a.Value == "" || t != gwapiv1.IPAddressType && t != gwapiv1.HostnameAddressType {
			continue
		}
		asked = append(asked, gwapiv1.GatewayStatusAddress{Type: &t, Value: a.Value})
		if slices.ContainsFunc(envoys, func(e gwapiv1.GatewayStatusAddress) bool { return sameAddress(e, t, a.Value) }) {
			usable = append(usable, asked[len(asked)-1])
		} else {
			unusable = append(unusable, a.Value)
		}
	}
	if len(asked) == 0 {
		return envoys, want
	}
	if len(unusable) > 0 {
		want = *want.DeepCopy()
		for i, c := range want.Conditions {
			if c.Type == string(gwapiv1.GatewayConditionProgrammed) {
				var have []string
				for _, e := range envoys {
					have = append(have, e.Value)
				}
				want.Conditions[i].Status = metav1.ConditionFalse
				want.Conditions[i].Reason = string(gwapiv1.GatewayReasonAddressNotUsable)
				want.Conditions[i].Message = fmt.Sprintf("spec.addresses: %s not an address of the Envoys (%s)", strings.Join(unusable, ", "), strings.Join(have, ", "))
			}
		}
	}
	return usable, want
}

// sameAddress says whether an Envoy address is value of type t (IP
// addresses compared as addresses, hostnames without case).
func sameAddress(e gwapiv1.GatewayStatusAddress, t gwapiv1.AddressType, value string) bool {
	et := gwapiv1.IPAddressType
	if e.Type != nil {
		et = *e.Type
	}
	if et != t {
		return false
	}
	if t == gwapiv1.IPAddressType {
		a, errA := netip.ParseAddr(e.Value)
		b, errB := netip.ParseAddr(value)
		return errA == nil && errB == nil && a == b
	}
	return strings.EqualFold(e.Value, value)
}

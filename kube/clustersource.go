package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// ClusterSource serves State from a live API server through shared informers
// on Ingress, IngressClass, Service, EndpointSlice and TLS Secrets, and on
// the Gateway API kinds the API server serves, which the caller makes and
// starts (see NewInformerFactories, NewGatewayInformerFactory), and through a
// watch of its own on each Secret or ConfigMap an owned Ingress refers to
// (see References).
type ClusterSource struct {
	Informers Informers
	Filter    ClassFilter
	Logger    *slog.Logger
	// EndpointsChanged, when set, is called instead of Run's changed for
	// changes to EndpointSlices alone, so that they can take a faster lane.
	EndpointsChanged func()
	// References say which Secrets and ConfigMaps, beside spec.tls's, the
	// owned Ingresses refer to; State holds those, and of all the Secrets
	// and ConfigMaps of the cluster only those. Zero: none.
	References Refs
	// followed is what the referenced ConfigMaps named in their data at
	// the last State (References.ConfigMap), watched as well.
	followed []Reference

	synced  atomic.Bool
	changes changeLog
	// ingressKeys and serviceKeys record, for State, the Ingresses and
	// Services that changed since it last listed them: it looks those up
	// rather than listing and sorting 10,000 Ingresses (or 100,000
	// Services) again because one changed.
	ingressKeys, serviceKeys keyLog
	// sliceChanges records, for State, the Services whose EndpointSlices
	// changed since it last grouped them: it regroups only those rather
	// than listing 100,000 slices again (at 10,000 Ingresses) because one
	// endpoint moved.
	sliceChanges changeLog

	// State is rebuilt part by part: only the parts whose objects changed
	// since the previous State are listed again; the rest is shared with it
	// (parts are never modified once built).
	dirty  atomic.Uint32
	mu     sync.Mutex
	cached *State

	ingresses      networkinglisters.IngressLister
	ingressClasses networkinglisters.IngressClassLister
	services       cache.Store
	secrets        corelisters.SecretLister
	slices         sliceGroups
	referenced     *referenceWatches
}

// TakeChanges implements Source.
func (s *ClusterSource) TakeChanges() Changes { return s.changes.take() }

// EndpointSlices implements Source.
func (s *ClusterSource) EndpointSlices(svc types.NamespacedName) []*EndpointSlice {
	return s.slices.of(svc)
}

var _ Source = (*ClusterSource)(nil)

// Run implements Source. It returns once ctx is done, or with an error when
// the caches cannot sync. The informers may be started before or after Run
// is called.
func (s *ClusterSource) Run(ctx context.Context, changed func()) error {
	// record, when set, notes which object changed, for State (keyLog);
	// before the part is marked dirty, as slices are.
	handlerFor := func(part uint32, record func(obj any)) cache.ResourceEventHandlerFuncs {
		changedPart := func(obj any) {
			if record != nil {
				record(obj)
			}
			s.dirty.Or(part)
			s.changes.everything()
			s.notify(changed)
		}
		return cache.ResourceEventHandlerFuncs{
			AddFunc:    changedPart,
			UpdateFunc: func(_, obj any) { changedPart(obj) },
			DeleteFunc: changedPart,
		}
	}
	// EndpointSlice changes are recorded by Service, for the endpoint fast
	// path: they never change listeners, routes or clusters. The groups
	// are updated first, so that whoever takes the record finds them so.
	sliceChanged := func(svc types.NamespacedName, named bool) {
		// Recorded before the part is marked dirty: State takes the record
		// after clearing the mark, so it never sees the mark without it.
		if named {
			s.sliceChanges.endpointsOf(svc)
		} else {
			s.sliceChanges.everything()
		}
		s.dirty.Or(partSlices)
		if named {
			s.changes.endpointsOf(svc)
			if s.EndpointsChanged != nil {
				s.notify(s.EndpointsChanged)
				return
			}
		} else {
			s.changes.everything()
		}
		s.notify(changed)
	}
	sliceHandler := cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if slice, ok := obj.(*EndpointSlice); ok {
				sliceChanged(s.slices.put(slice))
			}
		},
		UpdateFunc: func(old, obj any) {
			prev, ok1 := old.(*EndpointSlice)
			slice, ok2 := obj.(*EndpointSlice)
			if !ok1 || !ok2 {
				return
			}
			// Moved to another Service (its label changed): out of the
			// old group first. Otherwise the slice is replaced in place,
			// never missing from its group.
			was, _ := prev.ServiceName()
			if now, _ := slice.ServiceName(); was != now {
				sliceChanged(s.slices.remove(prev))
			}
			sliceChanged(s.slices.put(slice))
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if slice, ok := obj.(*EndpointSlice); ok {
				sliceChanged(s.slices.remove(slice))
			}
		},
	}
	// Writing an Ingress's status (we do, for every Ingress) must not cost
	// a rebuild: updates that change neither spec nor annotations are
	// dropped. Spec changes move metadata.generation; annotations don't.
	ingressHandler := handlerFor(partIngresses, s.ingressKeys.changed)
	anyUpdate := ingressHandler.UpdateFunc
	ingressHandler.UpdateFunc = func(old, obj any) {
		if a, ok := old.(*networkingv1.Ingress); ok {
			if b, ok := obj.(*networkingv1.Ingress); ok && SpecEqual(a, b) {
				return
			}
		}
		anyUpdate(old, obj)
	}
	// A class change may change which Ingresses are ours: all are
	// looked at again.
	classHandler := handlerFor(partIngresses, func(any) { s.ingressKeys.everything() })
	inf := s.Informers
	handlers := []struct {
		kind     string // in the log
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"Ingress", inf.Ingresses.Informer(), ingressHandler},
		{"IngressClass", inf.IngressClasses.Informer(), classHandler},
		{"Service", inf.Services, handlerFor(partServices, s.serviceKeys.changed)},
		{"EndpointSlice", inf.EndpointSlices, sliceHandler},
		{"Secret", inf.TLSSecrets.Informer(), handlerFor(partSecrets, nil)},
	}
	// Gateway API objects are few next to Services: any change lists them
	// all again. Updates that leave the generation (the spec) as it was
	// are status writes, dropped as the Ingresses' are.
	gatewayHandler := handlerFor(partGateway, nil)
	anyGatewayUpdate := gatewayHandler.UpdateFunc
	gatewayHandler.UpdateFunc = func(old, obj any) {
		if !gatewayGenerationEqual(old, obj) {
			anyGatewayUpdate(old, obj)
		}
	}
	for _, g := range inf.Gateway.all() {
		if g.informer != nil {
			handlers = append(handlers, struct {
				kind     string
				informer cache.SharedIndexInformer
				handler  cache.ResourceEventHandler
			}{g.kind, g.informer, gatewayHandler})
		}
	}
	// Synced means each handler has seen its informer's initial list, not
	// only that the informer has it: the slice groups are built from the
	// handler's events.
	syncs := make([]kindSynced, 0, len(handlers))
	for _, h := range handlers {
		reg, err := h.informer.AddEventHandler(h.handler)
		if err != nil {
			return fmt.Errorf("adding event handler: %w", err)
		}
		defer h.informer.RemoveEventHandler(reg)
		syncs = append(syncs, kindSynced{kind: h.kind, synced: reg.HasSynced, count: countOf(h.informer)})
	}
	s.ingresses = inf.Ingresses.Lister()
	s.ingressClasses = inf.IngressClasses.Lister()
	s.services = inf.Services.GetStore()
	s.secrets = inf.TLSSecrets.Lister()
	s.referenced = newReferenceWatches(ctx, inf.Referenced, func(r Reference) {
		part := partReferencedSecrets
		if r.Kind == KindConfigMap {
			part = partConfigMaps
		}
		s.dirty.Or(part)
		s.changes.everything()
		s.notify(changed)
	}, s.logger())

	start := time.Now()
	if !waitForSync(ctx, start, syncs, s.logger()) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("informer caches did not sync")
	}
	s.logger().Info("informer caches synced", "took", time.Since(start).Round(time.Millisecond))
	s.synced.Store(true)
	changed()
	<-ctx.Done()
	return nil
}

// notify passes changes on only once the caches are whole: a State built
// from half-filled caches would withdraw routes that still exist.
func (s *ClusterSource) notify(changed func()) {
	if s.synced.Load() {
		changed()
	}
}

// Parts of the State, as bits of ClusterSource.dirty.
const (
	partIngresses uint32 = 1 << iota // Ingresses and IngressClasses
	partServices
	partSlices
	partSecrets           // TLS Secrets
	partReferencedSecrets // Secrets Ingresses refer to (see References)
	partConfigMaps
	partGateway // Gateway API objects
	allParts    = partIngresses | partServices | partSlices | partSecrets | partReferencedSecrets | partConfigMaps | partGateway
)

// State implements Source.
func (s *ClusterSource) State() *State {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Taken before listing: a change racing with the listing is either seen
	// by it or marks its part dirty again for the next State.
	dirty := s.dirty.Swap(0)
	st := &State{}
	if s.cached == nil {
		dirty = allParts
	} else {
		*st = *s.cached
	}
	everything := labels.Everything()
	if dirty&partGateway != 0 {
		st.Gateway = gatewayState(s.Informers.Gateway.objects())
	}
	if dirty&partIngresses != 0 {
		st.Ingresses = s.ingressesSince(st.Ingresses)
	}
	if dirty&(partIngresses|partGateway) != 0 {
		// What the owned Ingresses and the Gateway API objects refer to
		// may have changed with them.
		secrets, configMaps := s.referenced.update(st.Ingresses, s.References.Ingress, GatewayReferences(st.Gateway), s.followed)
		if secrets {
			dirty |= partReferencedSecrets
		}
		if configMaps {
			dirty |= partConfigMaps
		}
	}
	if dirty&partConfigMaps != 0 {
		// What the referenced ConfigMaps name may have changed with
		// them (a new ConfigMap, new data).
		if followed := s.References.inConfigMaps(s.referenced.directConfigMaps()); !slices.Equal(followed, s.followed) {
			s.followed = followed
			if secrets, _ := s.referenced.update(st.Ingresses, s.References.Ingress, GatewayReferences(st.Gateway), followed); secrets {
				dirty |= partReferencedSecrets
			}
		}
	}
	if dirty&partServices != 0 {
		st.Services = s.servicesSince(st.Services)
	}
	if dirty&partSlices != 0 {
		st.EndpointSlices, st.SlicesSince = s.slicesByService(st.EndpointSlices)
	}
	if dirty&(partSecrets|partReferencedSecrets) != 0 {
		tls, _ := s.secrets.List(everything)
		st.Secrets = tlsSecretsByName(tls)
		// A referenced Secret is kept whole: it wins over the key pair the
		// TLS informer keeps of the same Secret.
		maps.Copy(st.Secrets, s.referenced.secrets())
	}
	if dirty&partConfigMaps != 0 {
		st.ConfigMaps = s.referenced.configMaps()
	}
	s.cached = st
	return st
}

// maxSplicedKeys bounds the objects of a kind State looks up one by one;
// past it, listing them all costs less.
const maxSplicedKeys = 256

// ingressesSince is State's list of owned Ingresses: prev with the
// Ingresses that changed since looked up again, or every Ingress listed,
// filtered and sorted when the change is not known by Ingress (an
// IngressClass changed, and the first time). Either way a new list: prev
// may be a State's.
func (s *ClusterSource) ingressesSince(prev []*networkingv1.Ingress) []*networkingv1.Ingress {
	keys, all := s.ingressKeys.take()
	classes, _ := s.ingressClasses.List(labels.Everything())
	if all || prev == nil || len(keys) > maxSplicedKeys {
		ingresses, _ := s.ingresses.List(labels.Everything())
		return ownedIngresses(ingresses, classes, s.Filter)
	}
	ours, defaultIsOurs := s.Filter.ourClasses(classes)
	out := slices.Clone(prev)
	for key := range keys {
		i, found := slices.BinarySearchFunc(out, key, compareIngress)
		ing, err := s.ingresses.Ingresses(key.Namespace).Get(key.Name)
		owned := err == nil && s.Filter.owns(ing, ours, defaultIsOurs)
		switch {
		case found && owned:
			out[i] = ing
		case found:
			out = slices.Delete(out, i, i+1)
		case owned:
			out = slices.Insert(out, i, ing)
		}
	}
	return out
}

// compareIngress orders Ingresses as State lists them, by namespace and
// name.
func compareIngress(ing *networkingv1.Ingress, key types.NamespacedName) int {
	if c := strings.Compare(ing.Namespace, key.Namespace); c != 0 {
		return c
	}
	return strings.Compare(ing.Name, key.Name)
}

// servicesSince is State's map of Services: a copy of prev with the
// Services that changed since looked up again, or every Service listed
// when the change is not known by Service (and the first time).
func (s *ClusterSource) servicesSince(prev map[types.NamespacedName]*Service) map[types.NamespacedName]*Service {
	keys, all := s.serviceKeys.take()
	if all || prev == nil || len(keys) > maxSplicedKeys {
		return servicesByName(kept[*Service](s.services))
	}
	out := maps.Clone(prev)
	for key := range keys {
		obj, exists, _ := s.services.GetByKey(key.Namespace + "/" + key.Name)
		if svc, ok := obj.(*Service); exists && ok {
			out[key] = svc
		} else {
			delete(out, key)
		}
	}
	return out
}

// slicesByService groups the EndpointSlices by Service: the previous
// grouping (prev) with the groups of the Services whose slices changed
// taken again, or, when the change is not known by Service (and the first
// time), every group. The result is a new map either way (see State), and
// in the first case it says which Services it took again.
func (s *ClusterSource) slicesByService(prev map[types.NamespacedName][]*EndpointSlice) (map[types.NamespacedName][]*EndpointSlice, *SliceChanges) {
	changes := s.sliceChanges.take()
	if changes.All || prev == nil {
		return s.slices.all(), nil
	}
	out := maps.Clone(prev)
	since := &SliceChanges{Base: prev, Services: make([]types.NamespacedName, 0, len(changes.Endpoints))}
	for svc := range changes.Endpoints {
		if list := s.EndpointSlices(svc); len(list) > 0 {
			out[svc] = list
		} else {
			delete(out, svc)
		}
		since.Services = append(since.Services, svc)
	}
	return out, since
}

// kept lists what an informer holds of the kind its transform keeps.
func kept[T any](store cache.Store) []T {
	objs := store.List()
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if v, ok := o.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func (s *ClusterSource) logger() *slog.Logger { return loggerOr(s.Logger) }

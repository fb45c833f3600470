package kube

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Kinds of object a Reference may name.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// Reference names an object an Ingress refers to beside its backends and
// its spec.tls Secrets, typically through an annotation: a Secret of any
// type (an htpasswd file, a CA bundle) or a ConfigMap. Which annotations
// refer to what is the translator's knowledge; kube only learns it through
// a References function handed in by the caller, so that data still flows
// one way, kube -> translate.
type Reference struct {
	Kind string // KindSecret or KindConfigMap; other kinds are ignored
	types.NamespacedName
}

// Refs says which Secrets and ConfigMaps a State holds beside the TLS
// Secrets, and so which ones a source watches: those the owned Ingresses
// refer to, and those named in the data of a ConfigMap so referenced (the
// controller ConfigMap's add-headers names another ConfigMap). Which
// annotations and keys refer to what is the translator's knowledge,
// handed in by the caller, so that data still flows one way.
type Refs struct {
	// Ingress lists what an owned Ingress refers to; nil: nothing.
	Ingress func(*networkingv1.Ingress) []Reference
	// ConfigMap lists what a referenced ConfigMap names in its data; nil:
	// nothing. It is asked of the ConfigMaps the Ingresses (and Gateway
	// API objects) refer to, not of those it names itself: references
	// are followed one step, so that no chain of ConfigMaps can make a
	// source watch without end.
	ConfigMap func(*corev1.ConfigMap) []Reference
}

// inConfigMaps is what refs.ConfigMap names in the ConfigMaps of direct,
// sorted and without repeats (nil when it names nothing).
func (refs Refs) inConfigMaps(direct map[types.NamespacedName]*corev1.ConfigMap) []Reference {
	if refs.ConfigMap == nil {
		return nil
	}
	seen := map[Reference]bool{}
	var out []Reference
	for _, cm := range direct {
		for _, r := range refs.ConfigMap(cm) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b Reference) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// referenceSyncTimeout bounds how long State waits for the first lists of
// newly referenced objects while none of them comes in. A watch that cannot
// list (the API server is down, RBAC forbids it) must not hold every later
// rebuild: State goes on without the object, and the watch's events bring
// it in once it lists. The wait is renewed by each list that comes in, so
// that many references (each a request, under the client's rate limit)
// are all waited for as long as they keep coming.
const referenceSyncTimeout = 10 * time.Second

// referenceWatches watches each referenced Secret and ConfigMap on its own:
// a list and watch of that one object, selected by name in its namespace,
// started when some owned Ingress first refers to it and stopped when none
// does any more. This is how the kubelet watches the Secrets and
// ConfigMaps of its pods, and for the same reason: a cluster may hold
// tens of thousands of Secrets (Helm keeps every release in one, up to
// 1 MiB each) that no Ingress refers to. Nothing of those is sent to us or
// kept, not even their metadata, and none of their changes reaches us, so
// memory and traffic follow what is referenced, at the cost of one watch
// per referenced object. An informer on all Secrets that drops the data of
// unreferenced ones fails on a reference that appears later: its transform
// runs when an event arrives, so it would have nothing to give when an
// Ingress starts referring to a Secret that has not changed since; and
// keeping everything is what the TLS Secret informer's field selector
// exists to avoid. A metadata-only
// informer with a read of each referenced object would work, but keeps an
// entry for every Secret and ConfigMap of the cluster, and the reads need
// the get verb, which our RBAC does not grant.
type referenceWatches struct {
	ctx       context.Context // the source's Run: every watch ends with it
	listWatch func(Reference) cache.ListerWatcher
	changed   func(Reference)
	log       *slog.Logger
	timeout   time.Duration // referenceSyncTimeout but in tests

	mu      sync.Mutex
	watches map[Reference]*objectWatch
	// refsOf remembers References by Ingress object: informer objects are
	// replaced when they change, so the same pointer has the same
	// references, and a rebuild asks only about the Ingresses that changed.
	refsOf map[*networkingv1.Ingress][]Reference
	// direct are the references of the Ingresses and the extra ones,
	// whose data Refs.ConfigMap reads; not those it named.
	direct map[Reference]bool
}

type objectWatch struct {
	store      cache.Store
	controller cache.Controller
	cancel     context.CancelFunc
	// counted is set once State has taken the object's first list (or
	// gave up waiting for it). Until then events are not passed on: the
	// State that started the watch already holds what they bring, and a
	// second rebuild for it would find nothing new.
	counted atomic.Bool
}

func newReferenceWatches(ctx context.Context, listWatch func(Reference) cache.ListerWatcher, changed func(Reference), log *slog.Logger) *referenceWatches {
	return &referenceWatches{ctx: ctx, listWatch: listWatch, changed: changed, log: log, timeout: referenceSyncTimeout, watches: map[Reference]*objectWatch{}}
}

// update makes the watched objects those the ingresses refer to, extra
// (GatewayReferences) and followed (what those name in their data:
// Refs.ConfigMap): it starts the watches of new references and waits for
// their first list, and stops those of references gone. It reports
// whether the set of watched Secrets, and of watched ConfigMaps, changed.
func (w *referenceWatches) update(ingresses []*networkingv1.Ingress, references func(*networkingv1.Ingress) []Reference, extra, followed []Reference) (secrets, configMaps bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wanted := map[Reference]bool{}
	if w.listWatch != nil {
		for _, r := range extra {
			if r.Kind == KindSecret || r.Kind == KindConfigMap {
				wanted[r] = true
			}
		}
	}
	refsOf := make(map[*networkingv1.Ingress][]Reference, len(ingresses))
	if references != nil && w.listWatch != nil {
		for _, ing := range ingresses {
			refs, ok := w.refsOf[ing]
			if !ok {
				refs = references(ing)
			}
			refsOf[ing] = refs
			for _, r := range refs {
				if r.Kind == KindSecret || r.Kind == KindConfigMap {
					wanted[r] = true
				}
			}
		}
	}
	w.refsOf = refsOf
	w.direct = map[Reference]bool{}
	for r := range wanted {
		w.direct[r] = true
	}
	if w.listWatch != nil {
		for _, r := range followed {
			if r.Kind == KindSecret || r.Kind == KindConfigMap {
				wanted[r] = true
			}
		}
	}
	mark := func(r Reference) {
		if r.Kind == KindSecret {
			secrets = true
		} else {
			configMaps = true
		}
	}
	for r, ow := range w.watches {
		if !wanted[r] {
			ow.counted.Store(false) // its last events are of no interest
			ow.cancel()
			delete(w.watches, r)
			mark(r)
		}
	}
	var started []*objectWatch
	for r := range wanted {
		if w.watches[r] == nil {
			ow := w.start(r)
			w.watches[r] = ow
			started = append(started, ow)
			mark(r)
		}
	}
	w.waitForLists(started)
	return secrets, configMaps
}

func (w *referenceWatches) start(r Reference) *objectWatch {
	var objType runtime.Object = &corev1.Secret{}
	if r.Kind == KindConfigMap {
		objType = &corev1.ConfigMap{}
	}
	ow := &objectWatch{}
	onEvent := func(any) {
		if ow.counted.Load() {
			w.changed(r)
		}
	}
	ow.store, ow.controller = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: w.listWatch(r),
		ObjectType:    objType,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    onEvent,
			UpdateFunc: func(_, obj any) { onEvent(obj) },
			DeleteFunc: onEvent,
		},
		// Referenced objects are kept whole (a CA bundle may sit beside a
		// key pair), less what nobody reads.
		Transform: dropUnusedFields,
	})
	ctx, cancel := context.WithCancel(w.ctx)
	ow.cancel = cancel
	go ow.controller.RunWithContext(ctx)
	return ow
}

// waitForLists waits for each watch's first list (see
// referenceSyncTimeout), so that a State never has an Ingress without the
// objects it refers to: the translator would report them missing, on the
// Ingress.
func (w *referenceWatches) waitForLists(watches []*objectWatch) {
	pending := watches
	// Counted in any case: a watch that lists late brings its object in
	// through its events.
	defer func() {
		for _, ow := range watches {
			ow.counted.Store(true)
		}
	}()
	deadline := time.NewTimer(w.timeout)
	defer deadline.Stop()
	poll := time.NewTicker(5 * time.Millisecond)
	defer poll.Stop()
	for {
		waiting := pending[:0:0]
		for _, ow := range pending {
			if !ow.controller.HasSynced() {
				waiting = append(waiting, ow)
			}
		}
		if len(waiting) == 0 {
			return
		}
		if len(waiting) < len(pending) {
			deadline.Reset(w.timeout)
		}
		pending = waiting
		select {
		case <-w.ctx.Done():
			return
		case <-deadline.C:
			w.log.Warn("referenced objects not listed in time; going on without them", "objects", len(pending), "timeout", w.timeout)
			return
		case <-poll.C:
		}
	}
}

// secrets returns the watched Secrets that exist, by name, in a map of
// its own.
func (w *referenceWatches) secrets() map[types.NamespacedName]*corev1.Secret {
	return watched[*corev1.Secret](w, KindSecret, false)
}

// configMaps returns the watched ConfigMaps that exist, by name, in a map
// of its own.
func (w *referenceWatches) configMaps() map[types.NamespacedName]*corev1.ConfigMap {
	return watched[*corev1.ConfigMap](w, KindConfigMap, false)
}

// directConfigMaps are the watched ConfigMaps the Ingresses and the
// extra references name (update), not those named in their data.
func (w *referenceWatches) directConfigMaps() map[types.NamespacedName]*corev1.ConfigMap {
	return watched[*corev1.ConfigMap](w, KindConfigMap, true)
}

func watched[T any](w *referenceWatches, kind string, directOnly bool) map[types.NamespacedName]T {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[types.NamespacedName]T{}
	for r, ow := range w.watches {
		if r.Kind != kind || directOnly && !w.direct[r] {
			continue
		}
		for _, obj := range ow.store.List() {
			if v, ok := obj.(T); ok {
				out[r.NamespacedName] = v
			}
		}
	}
	return out
}

// references lists what is watched.
func (w *referenceWatches) references() map[Reference]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[Reference]bool, len(w.watches))
	for r := range w.watches {
		out[r] = true
	}
	return out
}

package translate

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

// Result is everything one translation produces.
type Result struct {
	Resources *Resources
	Problems  []Problem
}

// Translate runs both steps: Ingress semantics, then Envoy rendering.
func Translate(st *kube.State, opts Options) (*Result, error) {
	return NewTranslator(opts).Translate(st)
}

// Translator translates state after state, redoing only the work whose
// inputs changed: an Ingress, a Service, an EndpointSlice or a Secret. Its
// results are always identical to Translate's on the same state. It is not
// safe for concurrent use.
type Translator struct {
	opts  Options
	memo  *memo
	envoy *envoyCache

	// The previous result, its model, and the positions of the model's
	// ExternalName backends (which have no load assignment), for the
	// endpoint fast path; the positions are found on the first fast-path
	// change after a full translation.
	last      *Result
	lastModel *Model
	externals []int
}

// loadSlot locates a Service's first backend. A Service's backends are
// adjacent: backends are sorted by name, and their names start with
// namespace/service/.
type loadSlot struct {
	backend  int // index in lastModel.Backends
	resource int // index in last.Resources.Endpoints
}

// NewTranslator returns a Translator with nothing remembered yet.
func NewTranslator(opts Options) *Translator {
	return &Translator{opts: opts, memo: newMemo(), envoy: newEnvoyCache()}
}

// Translate translates one state.
func (t *Translator) Translate(st *kube.State) (*Result, error) {
	m := t.memo.buildModel(st, t.opts)
	res, err := t.envoy.render(m, t.opts)
	if err != nil {
		t.last, t.lastModel, t.externals = nil, nil, nil
		return nil, fmt.Errorf("rendering envoy resources: %w", err)
	}
	result := &Result{Resources: res, Problems: m.Problems}
	t.last, t.lastModel, t.externals = result, m, nil
	return result, nil
}

// firstLoad locates a Service's first backend in the previous model, by
// binary search: backend names start with namespace/service/ and are
// sorted (a map of 100,000 Services at 10,000 Ingresses would cost 7 MB).
func (t *Translator) firstLoad(svc types.NamespacedName) (loadSlot, bool) {
	if t.externals == nil {
		t.externals = []int{}
		for i, be := range t.lastModel.Backends {
			if be.ExternalName != "" {
				t.externals = append(t.externals, i)
			}
		}
	}
	backends := t.lastModel.Backends
	prefix := svc.Namespace + "/" + svc.Name + "/"
	i := sort.Search(len(backends), func(i int) bool { return backends[i].Name >= prefix })
	if i == len(backends) || backends[i].Service != svc {
		return loadSlot{}, false
	}
	// Every backend before it has a load assignment, but ExternalName ones.
	return loadSlot{backend: i, resource: i - sort.SearchInts(t.externals, i)}, true
}

// UpdateEndpoints is the endpoint fast path. When only the EndpointSlices of
// some Services changed since the previous Translate (slices holds their
// current EndpointSlices, in State order), only those Services' load
// assignments can differ: they are recomputed and everything else is reused.
// The result equals a full Translate of the new state. It reports false when
// there is no previous result to build on.
func (t *Translator) UpdateEndpoints(slices map[types.NamespacedName][]*kube.EndpointSlice) (*Result, bool) {
	if t.last == nil {
		return nil, false
	}
	res := *t.last.Resources
	copied := false
	for svc, current := range slices {
		first, ok := t.firstLoad(svc)
		if !ok {
			continue
		}
		r := first.resource
		for i := first.backend; i < len(t.lastModel.Backends); i++ {
			old := t.lastModel.Backends[i]
			if old.Service != svc {
				break
			}
			if old.ExternalName != "" {
				continue
			}
			resource := r
			r++
			be := *old
			be.Endpoints = t.memo.refreshEndpoints(&be, current)
			if sameEndpoints(be.Endpoints, old.Endpoints) {
				continue
			}
			if !copied {
				res.Endpoints = append(res.Endpoints[:0:0], res.Endpoints...)
				copied = true
			}
			t.lastModel.Backends[i] = &be
			res.Endpoints[resource] = t.envoy.refreshLoadAssignment(&be)
		}
	}
	t.last = &Result{Resources: &res, Problems: t.last.Problems}
	return t.last, true
}

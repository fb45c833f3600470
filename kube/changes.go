package kube

import (
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Changes says what changed since the previous TakeChanges, so that a change
// to endpoints alone can skip everything but endpoints.
type Changes struct {
	// All means something other than EndpointSlices changed (or the source
	// cannot tell): everything must be looked at again.
	All bool
	// Endpoints holds the Services whose EndpointSlices changed.
	Endpoints map[types.NamespacedName]bool
}

// changeLog accumulates Changes between takes. It starts as All, since the
// first build needs everything.
type changeLog struct {
	mu      sync.Mutex
	pending Changes
	started bool
}

func (l *changeLog) everything() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending.All = true
}

func (l *changeLog) endpointsOf(svc types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending.Endpoints == nil {
		l.pending.Endpoints = map[types.NamespacedName]bool{}
	}
	l.pending.Endpoints[svc] = true
}

func (l *changeLog) take() Changes {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.pending
	if !l.started {
		c.All, l.started = true, true
	}
	l.pending = Changes{}
	return c
}

// sortSlices orders a Service's EndpointSlices by name, the order State uses,
// so that the same slices always compare equal element by element.
func sortSlices(slices []*EndpointSlice) {
	sort.Slice(slices, func(i, j int) bool { return slices[i].Name < slices[j].Name })
}

package kube

import (
	"sort"

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

// changeLog accumulates Changes between takes: the Services whose
// EndpointSlices changed, or everything. Like every keyLog, its first take
// is everything, since the first build needs everything.
type changeLog struct{ keys keyLog }

func (l *changeLog) everything() { l.keys.everything() }

func (l *changeLog) endpointsOf(svc types.NamespacedName) { l.keys.add(svc) }

func (l *changeLog) take() Changes {
	keys, all := l.keys.take()
	return Changes{All: all, Endpoints: keys}
}

// sortSlices orders a Service's EndpointSlices by name, the order State uses,
// so that the same slices always compare equal element by element.
func sortSlices(slices []*EndpointSlice) {
	sort.Slice(slices, func(i, j int) bool { return slices[i].Name < slices[j].Name })
}

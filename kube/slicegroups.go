package kube

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// sliceGroups holds the EndpointSlices of each Service, in State order,
// kept up to date from the informer's events. It takes the place of an
// informer index: client-go keeps an index as a set of keys per value, a
// map of its own for each Service, for the one slice a Service usually
// has, where a short list does.
//
// A group is never modified once handed out: a change replaces the list,
// so State may share it.
type sliceGroups struct {
	mu     sync.Mutex
	groups map[types.NamespacedName][]*EndpointSlice
}

// put adds slice to its Service's group, or replaces the slice of the same
// name there. It reports the Service, and false for a slice of none.
func (g *sliceGroups) put(slice *EndpointSlice) (types.NamespacedName, bool) {
	svc, named := slice.ServiceName()
	if !named {
		return svc, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.groups == nil {
		g.groups = map[types.NamespacedName][]*EndpointSlice{}
	}
	old := g.groups[svc]
	i, found := slices.BinarySearchFunc(old, slice.Name, byName)
	next := make([]*EndpointSlice, 0, len(old)+1)
	next = append(next, old[:i]...)
	next = append(next, slice)
	if found {
		i++
	}
	g.groups[svc] = append(next, old[i:]...)
	return svc, true
}

// remove takes the slice of slice's name out of its Service's group. It
// reports the Service, and false for a slice of none.
func (g *sliceGroups) remove(slice *EndpointSlice) (types.NamespacedName, bool) {
	svc, named := slice.ServiceName()
	if !named {
		return svc, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.groups[svc]
	i, found := slices.BinarySearchFunc(old, slice.Name, byName)
	switch {
	case !found:
	case len(old) == 1:
		delete(g.groups, svc)
	default:
		g.groups[svc] = slices.Concat(old[:i], old[i+1:])
	}
	return svc, true
}

// of returns the EndpointSlices of one Service, nil for none.
func (g *sliceGroups) of(svc types.NamespacedName) []*EndpointSlice {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.groups[svc]
}

// all returns every group, in a map of its own.
func (g *sliceGroups) all() map[types.NamespacedName][]*EndpointSlice {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[types.NamespacedName][]*EndpointSlice, len(g.groups))
	for svc, list := range g.groups {
		out[svc] = list
	}
	return out
}

func byName(s *EndpointSlice, name string) int {
	switch {
	case s.Name < name:
		return -1
	case s.Name > name:
		return 1
	}
	return 0
}

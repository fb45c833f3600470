// Package xds publishes translated resources to Envoy: it turns them into
// validated, consistent go-control-plane snapshots with content-derived
// versions, batches bursts of changes, and serves them over ADS.
package xds

import (
	"fmt"
	"iter"
	"maps"
	"sync"
	"unsafe"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// validatable is implemented by every generated Envoy message
// (protoc-gen-validate).
type validatable interface {
	ValidateAll() error
}

// typedList is one type's resources as the translator produced them. The
// list is converted to go-control-plane's resource interface only when
// needed: the translator hands over the very same list for a type that did
// not change (at 10,000 Ingresses, 100,000 clusters on every Ingress
// change), and that is recognised without looking at its items.
type typedList struct {
	typeURL string
	data    unsafe.Pointer // the list's first element
	n       int
	items   func() []types.Resource
}

// sameList says whether l is exactly the list that produced prev.
func (l typedList) sameList(prev *typeSnapshot) bool {
	return prev.items != nil && l.data == prev.data && l.n == len(prev.items)
}

// typedResources lists a Resources value by xDS type URL, in a fixed order.
func typedResources(r *translate.Resources) []typedList {
	return []typedList{
		typed(resource.ListenerType, r.Listeners),
		typed(resource.RouteType, r.Routes),
		typed(resource.VirtualHostType, r.VirtualHosts),
		typed(resource.ScopedRouteType, r.ScopedRoutes),
		typed(resource.ClusterType, r.Clusters),
		typed(resource.EndpointType, r.Endpoints),
		typed(resource.SecretType, r.Secrets),
	}
}

func typed[T types.Resource](typeURL string, in []T) typedList {
	return typedList{
		typeURL: typeURL, data: unsafe.Pointer(unsafe.SliceData(in)), n: len(in),
		items: sync.OnceValue(func() []types.Resource { return toResources(in) }),
	}
}

func toResources[T types.Resource](in []T) []types.Resource {
	out := make([]types.Resource, len(in))
	for i, r := range in {
		out[i] = r
	}
	return out
}

// Snapshot is one published state of every type: its version, and its
// versions and resources by name. Publishing keeps it by position; the
// by-name views are built when first asked for.
type Snapshot struct {
	types [cacheTypes]typeSnapshot
	// deltaRoutes is the route content delta streams are answered from
	// (deltaroutes.go).
	deltaRoutes typeSnapshot
}

// GetVersion returns the version of a type (its content's hash), or "" for
// a type never published.
func (s *Snapshot) GetVersion(typeURL string) string {
	if ts := s.typeState(typeURL); ts != nil {
		return ts.version
	}
	return ""
}

// GetVersionMap returns each resource's version (its own content hash) by
// name. The map is shared: read it only.
func (s *Snapshot) GetVersionMap(typeURL string) map[string]string {
	if ts := s.typeState(typeURL); ts != nil {
		return ts.indexes().versions
	}
	return nil
}

// GetResources returns the resources of a type by name. The map is shared:
// read it only.
func (s *Snapshot) GetResources(typeURL string) map[string]types.Resource {
	if ts := s.typeState(typeURL); ts != nil {
		return ts.indexes().resources
	}
	return nil
}

// Count returns the number of resources of a type.
func (s *Snapshot) Count(typeURL string) int {
	if ts := s.typeState(typeURL); ts != nil {
		return len(ts.names)
	}
	return 0
}

func (s *Snapshot) typeState(typeURL string) *typeSnapshot {
	i := cache.GetResponseType(typeURL)
	if s == nil || i < 0 || int(i) >= len(s.types) || s.types[i].items == nil {
		return nil
	}
	return &s.types[i]
}

// consistent checks what Envoy relies on between types (go-control-plane's
// rule): the route configurations are exactly those the listeners name,
// and the load assignments exactly those the EDS clusters name. It works
// on positions and indexes rather than building maps of every name.
func consistent(next *[cacheTypes]typeSnapshot) error {
	listeners := &next[types.Listener]
	routeRefs := map[string]bool{}
	for _, l := range listeners.items {
		for name := range cache.GetResourceReferences(map[string]types.ResourceWithTTL{"": {Resource: l}})[resource.RouteType] {
			routeRefs[name] = true
		}
	}
	// Route scopes (scopes.go): each names its route configuration.
	for _, sc := range next[types.ScopedRoute].items {
		routeRefs[sc.(*routev3.ScopedRouteConfiguration).GetRouteConfigurationName()] = true
	}
	if err := referencedExactly(resource.RouteType, &next[types.Route], maps.Keys(routeRefs)); err != nil {
		return err
	}
	return referencedExactly(resource.EndpointType, &next[types.Endpoint], func(yield func(string) bool) {
		for _, item := range next[types.Cluster].items {
			var name string
			switch c := item.(type) {
			case clusterStandIn:
				name = c.GetName() // an EDS cluster fed by its namesake (its contract)
			case *clusterv3.Cluster:
				if c.GetType() != clusterv3.Cluster_EDS {
					continue
				}
				if name = c.GetEdsClusterConfig().GetServiceName(); name == "" {
					name = c.GetName()
				}
			default:
				continue
			}
			if !yield(name) {
				return
			}
		}
	})
}

// referencedExactly checks that refs names every resource of ts and no
// other.
func referencedExactly(typeURL string, ts *typeSnapshot, refs iter.Seq[string]) error {
	seen := make([]bool, len(ts.names))
	distinct, j := 0, 0
	for name := range refs {
		// The references come in the list's order, mostly (clusters and
		// their load assignments are both in name order).
		var ok bool
		j, ok = ts.index.near(name, j)
		if !ok {
			return fmt.Errorf("%s %q is referenced but missing", typeURL, name)
		}
		if !seen[j] {
			seen[j] = true
			distinct++
		}
	}
	if distinct != len(ts.names) {
		for j, ok := range seen {
			if !ok {
				return fmt.Errorf("%s %q is not referenced", typeURL, ts.names[j])
			}
		}
	}
	return nil
}

// NewSnapshot builds a consistent snapshot whose version of each type is a
// hash of that type's content: identical content always gets the identical
// version, even across restarts, so Envoy never rebuilds anything for a
// no-op. It does not validate; Validate does.
func NewSnapshot(r *translate.Resources) (*Snapshot, error) {
	return newSnapshotter().snapshot(r)
}

// sameVersions reports whether two snapshots have the same version for every
// type, that is, the same content.
func sameVersions(a, b *Snapshot) bool {
	for _, t := range servedTypes {
		if a.GetVersion(t) != b.GetVersion(t) {
			return false
		}
	}
	return a.deltaRoutes.version == b.deltaRoutes.version
}

func resourceCounts(snap *Snapshot) map[string]int {
	counts := make(map[string]int, len(servedTypes))
	for _, t := range servedTypes {
		counts[t] = snap.Count(t)
	}
	return counts
}

// Validate runs Envoy's field validation on every resource.
func Validate(r *translate.Resources) error {
	return newSnapshotter().validate(r)
}

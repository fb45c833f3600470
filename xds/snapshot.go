// Package xds publishes translated resources to Envoy: it turns them into
// validated, consistent go-control-plane snapshots with content-derived
// versions, batches bursts of changes, and serves them over ADS.
package xds

import (
	"sync"
	"unsafe"

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

// NewSnapshot builds a consistent snapshot whose version of each type is a
// hash of that type's content: identical content always gets the identical
// version, even across restarts, so Envoy never rebuilds anything for a
// no-op. It does not validate; Validate does.
func NewSnapshot(r *translate.Resources) (*cache.Snapshot, error) {
	return newSnapshotter().snapshot(r)
}

// sameVersions reports whether two snapshots have the same version for every
// type, that is, the same content.
func sameVersions(a, b *cache.Snapshot) bool {
	for _, t := range servedTypes {
		if a.GetVersion(t) != b.GetVersion(t) {
			return false
		}
	}
	return true
}

func resourceCounts(snap *cache.Snapshot) map[string]int {
	counts := make(map[string]int, len(servedTypes))
	for _, t := range servedTypes {
		counts[t] = len(snap.GetResourcesAndTTL(t))
	}
	return counts
}

// Validate runs Envoy's field validation on every resource.
func Validate(r *translate.Resources) error {
	return newSnapshotter().validate(r)
}

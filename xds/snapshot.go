// Package xds publishes translated resources to Envoy: it turns them into
// validated, consistent go-control-plane snapshots with content-derived
// versions, batches bursts of changes, and serves them over ADS.
package xds

import (
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

// typedResources lists a Resources value by xDS type URL, in a fixed order.
func typedResources(r *translate.Resources) []struct {
	typeURL string
	items   []types.Resource
} {
	return []struct {
		typeURL string
		items   []types.Resource
	}{
		{resource.ListenerType, toResources(r.Listeners)},
		{resource.RouteType, toResources(r.Routes)},
		{resource.ClusterType, toResources(r.Clusters)},
		{resource.EndpointType, toResources(r.Endpoints)},
		{resource.SecretType, toResources(r.Secrets)},
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

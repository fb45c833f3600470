// Package xds publishes translated resources to Envoy: it turns them into
// validated, consistent go-control-plane snapshots with content-derived
// versions, batches bursts of changes, and serves them over ADS.
package xds

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

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

// NewSnapshot validates the resources and builds a consistent snapshot whose
// version of each type is a hash of that type's content: identical content
// always gets the identical version, even across restarts, so Envoy never
// rebuilds anything for a no-op.
func NewSnapshot(r *translate.Resources) (*cache.Snapshot, error) {
	snap := &cache.Snapshot{}
	for _, t := range typedResources(r) {
		version, err := contentVersion(t.items)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.typeURL, err)
		}
		snap.Resources[cache.GetResponseType(t.typeURL)] = cache.NewResources(version, t.items)
	}
	if err := snap.Consistent(); err != nil {
		return nil, fmt.Errorf("inconsistent snapshot: %w", err)
	}
	// The per-resource versions delta xDS compares. Computed here, once,
	// rather than lazily by the cache: the snapshot is then never written
	// after it is shared, and the Inspector can read it freely.
	if err := snap.ConstructVersionMap(); err != nil {
		return nil, fmt.Errorf("versioning resources: %w", err)
	}
	return snap, nil
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
	var errs []error
	for _, t := range typedResources(r) {
		for _, item := range t.items {
			if v, ok := item.(validatable); ok {
				if err := v.ValidateAll(); err != nil {
					errs = append(errs, fmt.Errorf("%s %q: %w", t.typeURL, cache.GetResourceName(item), err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// contentVersion hashes the deterministic encoding of the resources, in order.
func contentVersion(items []types.Resource) (string, error) {
	h := sha256.New()
	opts := proto.MarshalOptions{Deterministic: true}
	var buf []byte
	for _, item := range items {
		var err error
		buf, err = opts.MarshalAppend(buf[:0], item)
		if err != nil {
			return "", fmt.Errorf("encoding %q: %w", cache.GetResourceName(item), err)
		}
		fmt.Fprintf(h, "%d:", len(buf))
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

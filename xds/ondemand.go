package xds

import (
	"crypto/sha256"
	"slices"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// On-demand clusters (translate/envoy/ondemand.go). When the translator
// marks clusters as coming on demand, a delta client's wildcard cluster
// subscription is answered without them, and the client subscribes to each
// by name when a request needs it (Envoy's on_demand filter, over the same
// ADS stream): the cache sends a cluster to a delta stream that subscribes
// to it by name, or that subscribes to all and the cluster is not lazy. A
// name asked for that does not exist is answered as removed, so that the
// request waiting for it fails at once (503) rather than at the filter's
// timeout. State-of-the-world clients get every cluster, as before: the
// filter finds the cluster there and does nothing.
//
// Which clusters are lazy is part of the cluster type's version, so that a
// change of it alone (a mirror added to a route makes its cluster one
// Envoy must hold) reaches the cache; the clusters it made eager count as
// updated, and wildcard clients are sent them.

// onDemandInto records which clusters of next come on demand, next being
// the cluster type's new state and prev the one it replaces.
func onDemandInto(next, prev *typeSnapshot, od *translate.OnDemand) {
	if next.items == nil {
		return
	}
	next.lazy = od
	next.version = lazyVersion(next.digest, od)
	old := prev.lazy
	if old == nil || od == nil || eagerDigest(old) == eagerDigest(od) {
		return
	}
	updated := make(map[string]bool, len(next.updated))
	for _, name := range next.updated {
		updated[name] = true
	}
	for name := range od.Eager {
		if _, exists := next.index.lookup(name); exists && old.Lazy(name) && !updated[name] {
			next.updated = append(next.updated, name)
		}
	}
	slices.Sort(next.updated)
}

// lazyVersion is the cluster type's version: its content's, and the eager
// clusters' when some are lazy.
func lazyVersion(digest [sha256.Size]byte, od *translate.OnDemand) string {
	if od != nil {
		xorInto(&digest, eagerDigest(od))
	}
	return digestVersion(digest)
}

// eagerDigest is a digest of the eager clusters' names, whatever their
// order.
func eagerDigest(od *translate.OnDemand) [sha256.Size]byte {
	d := itemDigest("\x00on-demand", "")
	for name := range od.Eager {
		xorInto(&d, itemDigest(name, "\x00eager"))
	}
	return d
}

// wantedBy says whether a delta subscription asks for a resource that
// exists: by name, by namespace (vhds.go), or as a wildcard one unless the
// resource comes on demand.
func (ts *typeSnapshot) wantedBy(sub cache.Subscription, name string) bool {
	if sub.IsWildcard() && !ts.lazy.Lazy(name) {
		return true
	}
	if !ts.namespaced {
		return subscribes(sub, name) // sotwserver.go
	}
	return ts.wants(sub.SubscribedResources(), name)
}

// withMissing is newDeltaResponse, telling the client of the names it asked
// for that do not exist (missingAsked) that they are removed.
func withMissing(req *cache.DeltaRequest, h held, ts *typeSnapshot, send []int, gone []string) *deltaResponse {
	if missing := missingAsked(req, ts); len(missing) > 0 {
		gone = append(gone, missing...)
		slices.Sort(gone)
		gone = slices.Compact(gone)
	}
	return newDeltaResponse(req, h, ts, send, gone)
}

// missingAsked is the names a delta request newly subscribes to that the
// type, whose resources come on demand, does not have: the client is told
// they are removed.
func missingAsked(req interface{ GetResourceNamesSubscribe() []string }, ts *typeSnapshot) []string {
	if ts.lazy == nil {
		return nil
	}
	var out []string
	for _, name := range req.GetResourceNamesSubscribe() {
		if name == "*" {
			continue
		}
		if _, exists := ts.index.lookup(name); !exists {
			out = append(out, name)
		}
	}
	return out
}

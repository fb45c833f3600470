package xds

import (
	"slices"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Make-before-break. A route (or listener, or virtual host) that names a
// cluster an Envoy has just been sent is useless to it until that cluster
// has warmed, which it does when its load assignment comes; applied
// earlier, the route sends every request to a cluster Envoy does not yet
// serve, and Envoy answers 503 until the endpoints arrive (a path switched
// to a new Service answered 503 for a while in the load command's Envoy
// phase: docs/benchmarks.md, "At 1,000 Ingresses, before (the bootstrap
// of `c7ade98`)"). So, for each ADS stream,
// the cache holds back the route types while the stream has not
// acknowledged the load assignments of the clusters the last cluster
// change added ("fresh"), and answers them once it has.
//
// What counts as acknowledged: a request of the load assignment type
// that comes after the stream was sent every fresh load assignment. That
// request is an ACK or a NACK; either ends the hold, so that a client that
// rejects the endpoints is not kept from its routes forever (it gets them,
// and answers 503 for that cluster as it would have anyway). A NACK of the
// clusters themselves ends it too: such an Envoy never asks for the fresh
// load assignments. A stream that has never asked for load assignments
// (a non-ADS client of routes alone, or an Envoy in its initial fetch,
// whose own warming already waits for endpoints) is never held.
//
// Only the clusters the last cluster change added are waited for: an
// Envoy that has not yet taken a previous change's is held for the new
// ones, which it can only get after those. Every fresh cluster with a load
// assignment in the current content is waited for, whether or not the held
// route names it: working out which clusters a route names means decoding
// it, and the wait is one round trip.
type makeBeforeBreak struct {
	fresh []string // load assignment names of the clusters the last cluster change added
	// freshAll is fresh with the load assignments of the added clusters
	// that come on demand (ondemand.go): a delta Envoy fetches those when
	// a request needs one, and that request waits for it, but a SotW
	// Envoy is sent them with the rest, and its routes wait for them as
	// for any.
	freshAll []string
	gen      int64 // counts cluster changes that set fresh
}

// waitedFor is the load assignments a stream's route types wait for.
func (m *makeBeforeBreak) waitedFor(key streamKey) []string {
	if key.delta {
		return m.fresh
	}
	return m.freshAll
}

// streamGate is what the cache knows of one stream's load assignments.
type streamGate struct {
	eds       bool  // it has asked for load assignments
	edsAcked  int64 // the gen at which it acknowledged every fresh one
	cdsNacked int64 // the gen at which it rejected the clusters
}

var _ watchPart = (*makeBeforeBreak)(nil)

// updated notes a cluster change's fresh load assignments; the watches
// held for the previous change's clusters wait for this one's now, or for
// nothing, so they are rechecked.
func (m *makeBeforeBreak) updated(c *resourceCache, changes []typeChange) bool {
	for _, ch := range changes {
		if ch.typeURL == resource.ClusterType {
			c.noteClusters(ch.prev, ch.state, c.types[resource.EndpointType])
			return true
		}
	}
	return false
}

// holds keeps a route type's watch while its stream is not ready.
func (m *makeBeforeBreak) holds(c *resourceCache, w *watch) bool {
	return heldBack(w.typeURL) && !c.ready(w.stream.key)
}

func (m *makeBeforeBreak) owes(*resourceCache, *watch) xdsResponse { return nil }

// settled reads what each request says of its stream's load assignments
// and clusters, once the request is answered or stored.
func (m *makeBeforeBreak) settled(c *resourceCache, at step, w *watch, _ xdsResponse) {
	if at == stepRequest {
		c.sawRequest(w.stream.key, w.typeURL, w.proto.nack(w), heldOf(w)) // sotwheld.go
	}
}

func (m *makeBeforeBreak) closed(*resourceCache, *streamState) {}

// heldBack says whether a type's responses wait for the clusters they use.
func heldBack(typeURL string) bool {
	return typeURL == resource.ListenerType || typeURL == resource.RouteType || typeURL == resource.VirtualHostType
}

// ready says whether a stream may be sent the route types now.
func (c *resourceCache) ready(key streamKey) bool {
	if len(c.mbb.waitedFor(key)) == 0 {
		return true
	}
	s := c.streams[key]
	if s == nil || !s.gate.eds {
		return true
	}
	return s.gate.edsAcked == c.mbb.gen || s.gate.cdsNacked == c.mbb.gen
}

// noteClusters computes the fresh load assignments of a cluster change:
// those of the EDS clusters it added (prev is the cluster content it
// replaces) that are in eds. A load assignment is named for its cluster's
// EDS service name, which several clusters may share (one per policy of a
// backend: translate/envoy/cluster.go), so a new cluster is waited for by
// the name it takes its endpoints from, not by its own.
func (c *resourceCache) noteClusters(prev, next, eds *typeSnapshot) {
	var fresh, lazy []string
	if prev != nil && eds != nil { // the first content is Envoy's initial fetch
		for _, name := range next.updated {
			if _, old := prev.index.lookup(name); old {
				continue
			}
			j, ok := next.index.lookup(name)
			if !ok {
				continue
			}
			if assignment, ok := edsNameOf(next.items[j]); ok { // sharededs.go
				if _, ok := eds.index.lookup(assignment); ok {
					if next.lazy.Lazy(name) {
						// ondemand.go: a delta Envoy asks for it when a
						// request needs it, and that request waits for
						// it to warm; a SotW one waits as for any.
						lazy = append(lazy, assignment)
					} else {
						fresh = append(fresh, assignment)
					}
				}
			}
		}
		slices.Sort(fresh)
		fresh = slices.Compact(fresh)
	}
	c.mbb.fresh = fresh
	c.mbb.freshAll = fresh
	if len(lazy) > 0 {
		c.mbb.freshAll = slices.Compact(slices.Sorted(slices.Values(slices.Concat(fresh, lazy))))
	}
	c.mbb.gen++
}

// sawRequest records what a request says of its stream's clusters and
// load assignments, and answers the stream's held watches if that ends
// the hold.
func (c *resourceCache) sawRequest(key streamKey, typeURL string, errorDetail bool, h held) {
	switch typeURL {
	case resource.EndpointType:
		g := c.gate(key)
		g.eds = true
		for _, name := range c.mbb.waitedFor(key) {
			if _, sent := h.version(name); !sent {
				return
			}
		}
		g.edsAcked = c.mbb.gen
	case resource.ClusterType:
		if !errorDetail {
			return
		}
		c.gate(key).cdsNacked = c.mbb.gen
	default:
		return
	}
	if s := c.streams[key]; s != nil && c.ready(key) {
		c.recheckStream(s) // watch.go
	}
}

func (c *resourceCache) gate(key streamKey) *streamGate { return &c.streamFor(key).gate }

// asksLoads says whether a stream has asked for load assignments.
func (c *resourceCache) asksLoads(key streamKey) bool {
	s := c.streams[key]
	return s != nil && s.gate.eds
}

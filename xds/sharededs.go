package xds

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Load assignments shared by clusters. Clusters that differ only in policy
// send to one backend and read its one load assignment (the EDS service
// name of a policy cluster is the backend's). When a delta Envoy is sent a
// cluster whose load assignment it already subscribes to for another
// cluster, it asks for nothing (the name is subscribed already), and the
// new cluster's subscription waits for an update of that load assignment:
// the cluster warms only when the endpoints next change, or at its initial
// fetch timeout (15 s); meanwhile a route to it answers 503, and Envoy
// does not acknowledge the clusters (it does once they have warmed). That
// happens to a policy cluster added beside its backend's others (an
// annotation added to an Ingress), to a cluster whose policy changed
// (Envoy makes it anew), and, with on-demand clusters (ondemand.go), each
// time Envoy fetches the second cluster of a backend.
//
// So right after a response of clusters to a delta stream, the cache sends
// the stream, on its endpoint watch, the load assignments of those
// clusters that it already holds, again, as they are. Envoy takes a
// stream's responses in order (the delta server sends them in the order
// they were put on the stream's one channel: assumption 8), so it has made
// the new clusters' subscriptions by then, and it hands each load
// assignment to every subscription of its name. With no endpoint watch
// open, the next one is answered with them.

// edsNameOf is the load assignment an EDS cluster reads.
func edsNameOf(item types.Resource) (string, bool) {
	switch c := item.(type) {
	case clusterStandIn:
		return c.GetName(), true
	case *clusterv3.Cluster:
		if c.GetType() != clusterv3.Cluster_EDS {
			return "", false
		}
		if name := c.GetEdsClusterConfig().GetServiceName(); name != "" {
			return name, true
		}
		return c.GetName(), true
	}
	return "", false
}

// sharedEDS is the part (watch.go) that sends a stream the load
// assignments it holds of the clusters it is being sent.
type sharedEDS struct {
	// clusters and names are what updatedLoads worked out last.
	clusters *typeSnapshot
	names    []string
}

var _ watchPart = (*sharedEDS)(nil)

func (*sharedEDS) updated(*resourceCache, []typeChange) bool { return false }
func (*sharedEDS) holds(*resourceCache, *watch) bool         { return false }
func (*sharedEDS) closed(*resourceCache, *streamState)       {}

// owes answers an endpoint request that nothing else answers with the
// load assignments due to its stream (dueLater), if any.
func (*sharedEDS) owes(c *resourceCache, w *watch) xdsResponse {
	if w.typeURL != resource.EndpointType || len(w.stream.due) == 0 {
		return nil
	}
	names := w.stream.due
	w.stream.due = nil
	return c.heldLoads(w, names)
}

// settled notes a cluster response: a delta one as it is put on the
// stream's channel, a SotW one an update sends before it goes (the
// protocols' deliver).
func (e *sharedEDS) settled(c *resourceCache, at step, w *watch, r xdsResponse) {
	ts := c.types[resource.ClusterType]
	if w.typeURL != resource.ClusterType || ts == nil {
		return
	}
	switch r := r.(type) {
	case *deltaResponse:
		if at == stepRequest || at == stepUpdate {
			c.sentDelta(w.stream.key, ts, r)
		}
	case *sotwResponse:
		if at == stepUpdate {
			e.sentSotw(c, w.stream.key, ts, r)
		}
	}
}

// sentDelta notes a response sent to a delta stream: after clusters, the
// load assignments it holds of them go again. A stream that has not asked
// for load assignments yet (an Envoy being sent its first clusters) holds
// none: its response is not even looked at, which at 10,000 Ingresses is
// 100,000 clusters per Envoy connecting.
func (c *resourceCache) sentDelta(key streamKey, ts *typeSnapshot, resp *deltaResponse) {
	w := c.endpointWatch(key)
	if w == nil && !c.asksLoads(key) {
		return
	}
	var names []string
	for _, res := range resp.resources {
		if j, ok := ts.index.lookup(res.GetName()); ok {
			if name, ok := edsNameOf(ts.items[j]); ok {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	c.pushHeldLoads(key, w, names)
}

// endpointWatch is a stream's stored endpoint watch, if any: its own
// (streamState.stored), not found among every stream's, which made each
// cluster response cost as much as there are streams.
func (c *resourceCache) endpointWatch(key streamKey) *watch {
	if s := c.streams[key]; s != nil {
		return s.stored[resource.EndpointType]
	}
	return nil
}

// pushHeldLoads answers a stream's endpoint watch w with the named load
// assignments it holds, or, with no watch open, keeps them for its next
// endpoint request.
func (c *resourceCache) pushHeldLoads(key streamKey, w *watch, names []string) {
	if w == nil {
		c.dueLater(key, names)
		return
	}
	if r := c.heldLoads(w, names); r != nil {
		w.proto.deliver(c, w, r, stepPart)
		c.unstore(w)
	}
}

// heldLoads is an answer to an endpoint watch with those of the named
// load assignments that its client holds, or nil.
func (c *resourceCache) heldLoads(w *watch, names []string) xdsResponse {
	ts, send := c.heldPositions(heldOf(w), names) // sotwheld.go
	if len(send) == 0 {
		return nil
	}
	return w.proto.partial(w, ts, send)
}

// heldPositions is the current load assignments, and the positions among
// them of those named that the client holds (h), sorted and distinct.
func (c *resourceCache) heldPositions(h held, names []string) (*typeSnapshot, []int) {
	ts := c.types[resource.EndpointType]
	if ts == nil {
		return nil, nil
	}
	var send []int
	for _, name := range names {
		if _, holds := h.version(name); !holds {
			continue // not subscribed yet: Envoy asks for it, and gets it
		}
		if j, ok := ts.index.lookup(name); ok {
			send = append(send, j)
		}
	}
	slices.Sort(send)
	return ts, slices.Compact(send)
}

// State of the world. A SotW Envoy is stuck the same way (and acknowledges
// the clusters only once they have warmed, 15 s later), but the SotW server
// sends each type from a channel of its own, picking among those ready at
// random: a load assignment put on its channel with the clusters could
// reach Envoy before them, and miss the new cluster. So the load
// assignments are put on the stream's endpoint watch when the server takes
// the cluster response to send it (sotwResponse.onSend), which it sends
// before it picks its next response. Only a cluster change sent as it
// happens (to an open watch) does this, with the clusters it changed: an
// Envoy that acknowledges clusters after a later change has happened is
// sent the whole state, with no telling which clusters are new to it.

// sentSotw arranges for a SotW cluster response to send, as it goes, the
// load assignments the stream holds of the clusters the update changed.
func (e *sharedEDS) sentSotw(c *resourceCache, key streamKey, ts *typeSnapshot, resp *sotwResponse) {
	if len(ts.updated) == 0 || !c.asksLoads(key) {
		return // nothing changed, or it holds no load assignment
	}
	names := e.updatedLoads(ts)
	if len(names) == 0 {
		return
	}
	resp.onSend = func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.pushHeldLoads(key, c.endpointWatch(key), names)
	}
}

// updatedLoads is the load assignments that the clusters an update changed
// read, worked out once for every stream the update answers.
func (e *sharedEDS) updatedLoads(ts *typeSnapshot) []string {
	if e.clusters == ts {
		return e.names
	}
	var names []string
	for _, name := range ts.updated {
		if j, ok := ts.index.lookup(name); ok {
			if eds, ok := edsNameOf(ts.items[j]); ok {
				names = append(names, eds)
			}
		}
	}
	e.clusters, e.names = ts, names
	return names
}

// dueLater keeps load assignments for a stream's next endpoint watch. A
// stream that has never asked for load assignments holds none (an Envoy
// being sent its first clusters): nothing is kept for it, rather than the
// names of every cluster of its first response.
func (c *resourceCache) dueLater(key streamKey, names []string) {
	if !c.asksLoads(key) {
		return
	}
	s := c.streams[key]
	s.due = append(s.due, names...)
}

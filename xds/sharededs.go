package xds

import (
	"slices"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
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

// sentDelta notes a response sent to a delta stream: after clusters, the
// load assignments it holds of them go again. A stream that has not asked
// for load assignments yet (an Envoy being sent its first clusters) holds
// none: its response is not even looked at, which at 10,000 Ingresses is
// 100,000 clusters per Envoy connecting.
func (c *resourceCache) sentDelta(key streamKey, bound bool, typeURL string, ts *typeSnapshot, resp *deltaResponse) {
	if !bound || typeURL != resource.ClusterType {
		return
	}
	var open int64
	var w *watch
	for id, ew := range c.watches[resource.EndpointType] {
		if ew.stream != nil && ew.stream.key == key {
			open, w = id, ew
			break
		}
	}
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
	if w == nil {
		c.dueLater(key, names)
		return
	}
	if resp := c.heldLoads(w.deltaReq, w.sub.ReturnedResources(), names); resp != nil {
		w.deltaOut <- resp
		delete(c.watches[resource.EndpointType], open)
	}
}

// heldLoads is a response with those of the named load assignments that
// the client holds, or nil.
func (c *resourceCache) heldLoads(req *cache.DeltaRequest, known map[string]string, names []string) *deltaResponse {
	ts, send := c.heldPositions(known, names)
	if len(send) == 0 {
		return nil
	}
	return newDeltaResponse(req, known, ts, send, nil)
}

// heldPositions is the current load assignments, and the positions among
// them of those named that the client holds (known), sorted and distinct.
func (c *resourceCache) heldPositions(known map[string]string, names []string) (*typeSnapshot, []int) {
	ts := c.types[resource.EndpointType]
	if ts == nil {
		return nil, nil
	}
	var send []int
	for _, name := range names {
		if _, held := known[name]; !held {
			continue // not subscribed yet: Envoy asks for it, and gets it
		}
		if j, ok := ts.index.lookup(name); ok {
			send = append(send, j)
		}
	}
	slices.Sort(send)
	return ts, slices.Compact(send)
}

// takeDue returns, and forgets, the load assignments due to a stream's
// next endpoint request (dueLater), if typeURL is the endpoint type.
func (c *resourceCache) takeDue(key streamKey, typeURL string) []string {
	s := c.streams[key]
	if typeURL != resource.EndpointType || s == nil {
		return nil
	}
	names := s.due
	s.due = nil
	return names
}

// sharedEDS answers a bound delta stream's endpoint request, that nothing
// else answers, with the load assignments due to it, if any.
func (c *resourceCache) sharedEDS(key streamKey, req *cache.DeltaRequest, sub cache.Subscription) *deltaResponse {
	names := c.takeDue(key, req.GetTypeUrl())
	if len(names) == 0 {
		return nil
	}
	return c.heldLoads(req, sub.ReturnedResources(), names)
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
func (c *resourceCache) sentSotw(key streamKey, bound bool, typeURL string, ts *typeSnapshot, resp *sotwResponse) {
	if !bound || typeURL != resource.ClusterType || len(ts.updated) == 0 {
		return
	}
	if !c.asksLoads(key) {
		return // it holds no load assignment
	}
	names := c.updatedLoads(ts)
	if len(names) == 0 {
		return
	}
	resp.onSend = func() { c.pushHeldLoadsSotw(key, names) }
}

// updatedLoads is the load assignments that the clusters an update changed
// read, worked out once for every stream the update answers.
func (c *resourceCache) updatedLoads(ts *typeSnapshot) []string {
	if c.loadsOf.clusters == ts {
		return c.loadsOf.names
	}
	var names []string
	for _, name := range ts.updated {
		if j, ok := ts.index.lookup(name); ok {
			if eds, ok := edsNameOf(ts.items[j]); ok {
				names = append(names, eds)
			}
		}
	}
	c.loadsOf.clusters, c.loadsOf.names = ts, names
	return names
}

// loadsOf is what updatedLoads worked out last.
type loadsOf struct {
	clusters *typeSnapshot
	names    []string
}

// pushHeldLoadsSotw sends a SotW stream's endpoint watch the named load
// assignments it holds, or keeps them for its next endpoint watch.
func (c *resourceCache) pushHeldLoadsSotw(key streamKey, names []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, w := range c.watches[resource.EndpointType] {
		if w.stream != nil && w.stream.key == key {
			if resp := c.heldLoadsSotw(w.sotwReq, w.sub.ReturnedResources(), names); resp != nil {
				w.sotwOut <- resp
				delete(c.watches[resource.EndpointType], id)
			}
			return
		}
	}
	c.dueLater(key, names)
}

// heldLoadsSotw is a partial SotW response with those of the named load
// assignments the client holds, or nil.
func (c *resourceCache) heldLoadsSotw(req *cache.Request, known map[string]string, names []string) *sotwResponse {
	ts, send := c.heldPositions(known, names)
	if len(send) == 0 {
		return nil
	}
	return newSotwPartial(req, known, ts, send, nil)
}

// sharedEDSSotw answers a bound SotW stream's endpoint request, that
// nothing else answers, with the load assignments due to it, if any.
func (c *resourceCache) sharedEDSSotw(key streamKey, req *cache.Request, sub cache.Subscription) *sotwResponse {
	names := c.takeDue(key, req.GetTypeUrl())
	if len(names) == 0 {
		return nil
	}
	return c.heldLoadsSotw(req, sub.ReturnedResources(), names)
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

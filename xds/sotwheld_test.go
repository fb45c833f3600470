package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestCompactLoadAssignmentsFollowEveryChange: SotW streams naming every
// load assignment, as a SotW Envoy does, decoded as the codec decodes
// them (the content's own list: requestnames.go), hold exactly the
// snapshot's load assignments through a random series of clusters
// coming, going and changing their endpoints, whether they acknowledge at
// once, one change late or two changes late (then naming a list no
// longer current); and so do a stream naming a copy of that list, one
// naming one fewer now and then, and streams connecting late. After every
// answer to a stream up to date, what the server keeps of its load
// assignments is an empty map standing for the content (sotwheld.go),
// not a map of every name.
func TestCompactLoadAssignmentsFollowEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := quietServer()
	f := fixture{listenerPort: 10000, clusters: map[string][]string{}}
	endpoint := func() string { return fmt.Sprintf("127.0.0.%d:%d", 1+rng.IntN(3), 8000+rng.IntN(3)) }
	for i := range 8 {
		f.clusters[fmt.Sprintf("c%d", i)] = []string{endpoint()}
	}
	publishOK(t, s, f.resources(t))
	served := func() []string {
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		return s.cache.types[resource.EndpointType].names
	}
	fewer := false
	clients := map[string]*cacheClient{}
	add := func(name string, follow func() []string, lag int) *cacheClient {
		c := newCacheClient(name, false, resource.EndpointType, follow())
		c.stream = &streamKey{id: int64(len(clients) + 1)}
		c.follow = follow
		c.slow, c.lag = lag > 0, max(0, lag-1)
		c.watch(t, s.cache, nil, nil)
		c.drain(t, s.cache)
		clients[name] = c
		return c
	}
	for lag := range 3 {
		add(fmt.Sprintf("every-lag-%d", lag), served, lag)
	}
	add("a-copy", func() []string { return slices.Clone(served()) }, 0)
	add("one-fewer-now-and-then", func() []string {
		names := served()
		if fewer {
			return slices.Clone(names[1:])
		}
		return names
	}, 0)

	compact := 0
	for step := range 200 {
		switch op := rng.IntN(10); {
		case op < 6: // endpoints of one cluster change
			names := sortedKeys(f.clusters)
			f.clusters[names[rng.IntN(len(names))]] = []string{endpoint(), endpoint()}[:1+rng.IntN(2)]
		case op < 8: // a cluster comes
			f.clusters[fmt.Sprintf("c%d", rng.IntN(16))] = []string{endpoint()}
		default: // a cluster goes
			if names := sortedKeys(f.clusters); len(names) > 1 {
				delete(f.clusters, names[rng.IntN(len(names))])
			}
		}
		publishOK(t, s, f.resources(t))
		snap := s.Snapshot()
		fewer = step%5 == 0
		if step%25 == 0 {
			add(fmt.Sprintf("late-%d", step), served, 0)
		}
		for _, name := range sortedKeys(clients) {
			c := clients[name]
			c.drain(t, s.cache)
			if c.name == "one-fewer-now-and-then" {
				// Unsubscribes from one and subscribes to it again.
				c.watch(t, s.cache, nil, nil)
				c.drain(t, s.cache)
			}
			if c.stale {
				continue // has not acknowledged yet, so was sent nothing since
			}
			c.check(t, snap)
			if c.name == "a-copy" || c.name == "one-fewer-now-and-then" && fewer {
				continue
			}
			s.cache.mu.Lock()
			known := c.sub.ReturnedResources()
			h := sotwHeldIn(s.cache.streams[*c.stream], resource.EndpointType, known)
			s.cache.mu.Unlock()
			if !sameList(c.names, served()) {
				continue // names a list no longer current: it acknowledges late
			}
			if h.all == nil || h.all.version != snap.GetVersion(resource.EndpointType) || len(known) != 0 {
				t.Fatalf("step %d: %s holds a map of %d entries standing for %v; want an empty one standing for version %s",
					step, c.name, len(known), h.all, snap.GetVersion(resource.EndpointType))
			}
			compact++
		}
	}
	if compact < 600 {
		t.Fatalf("only %d checks of up-to-date streams", compact)
	}
}

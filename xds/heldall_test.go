package xds

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestCompactVirtualHostsFollowEveryChange: delta streams subscribing to
// virtual hosts as a wildcard, as Envoy's VHDS does, hold exactly the
// snapshot's virtual hosts through a random series of hosts coming,
// changing and going, whether they acknowledge at once, one change late,
// or two changes late (answered from a comparison of everything with the
// content of a version no longer current), and when they unsubscribe from
// one virtual host by name (the protocol then sends it again). And after
// every answer, what the server keeps of each stream's virtual hosts is
// one entry for the version, not a map of every host (heldall.go).
func TestCompactVirtualHostsFollowEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	s := quietServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1", "b": "127.0.0.1:2"}, hosts: map[string]map[string]string{}}
	cluster := func() string { return []string{"a", "b"}[rng.IntN(2)] }
	for i := range 6 {
		f.hosts[fmt.Sprintf("h%d.example", i)] = map[string]string{"/": cluster()}
	}
	r, made := bothForms(t, f, nil, true)
	publishOK(t, s, r)

	type stream struct {
		key            streamKey
		routes, vhosts *cacheClient
	}
	var streams []stream
	for i := range 6 {
		st := stream{key: streamKey{delta: true, id: int64(i + 1)}}
		st.routes = newCacheClient(fmt.Sprintf("routes-%d", i), true, resource.RouteType, []string{fixtureRoute})
		st.vhosts = newCacheClient(fmt.Sprintf("vhosts-%d", i), true, resource.VirtualHostType, nil)
		st.routes.stream, st.vhosts.stream = &st.key, &st.key
		// 0-1 acknowledge at once, 2-3 one change late, 4-5 two.
		st.vhosts.slow, st.vhosts.lag = i >= 2, max(0, i/2-1)
		for _, c := range []*cacheClient{st.routes, st.vhosts} {
			c.watch(t, s.cache, c.names, nil)
			c.drain(t, s.cache)
		}
		streams = append(streams, st)
	}

	compact := 0
	for step := range 200 {
		switch op := rng.IntN(10); {
		case op < 4: // a host's routes change
			hosts := sortedKeys(f.hosts)
			f.hosts[hosts[rng.IntN(len(hosts))]] = map[string]string{"/": cluster(), fmt.Sprintf("/p%d", rng.IntN(3)): cluster()}
		case op < 7: // a host comes
			f.hosts[fmt.Sprintf("h%d.example", rng.IntN(12))] = map[string]string{"/": cluster()}
		default: // a host goes
			if hosts := sortedKeys(f.hosts); len(hosts) > 1 {
				delete(f.hosts, hosts[rng.IntN(len(hosts))])
			}
		}
		r, made = bothForms(t, f, made, true)
		publishOK(t, s, r)
		snap := s.Snapshot()
		for i, st := range streams {
			st.routes.drain(t, s.cache)
			st.vhosts.drain(t, s.cache)
			if i == 1 && step%7 == 0 && !st.vhosts.stale {
				// Unsubscribed from by name while a wildcard: held at no
				// version by the server, and so sent again.
				names := sortedKeys(snap.GetResources(resource.VirtualHostType))
				st.vhosts.watch(t, s.cache, nil, names[:1])
				st.vhosts.drain(t, s.cache)
			}
			if st.vhosts.stale {
				continue // has not acknowledged yet, so was sent nothing since
			}
			st.vhosts.check(t, snap)
			s.cache.mu.Lock()
			known := st.vhosts.sub.ReturnedResources()
			all := s.cache.streams[st.key].allHeld[resource.VirtualHostType]
			s.cache.mu.Unlock()
			if len(known) != 2 || all == nil || known[allHeld] != all.version || all.version != snap.GetVersion(resource.VirtualHostType) {
				t.Fatalf("step %d: %s holds %d entries (%v), the stream's content %v; want the current version %s whole, as one entry",
					step, st.vhosts.name, len(known), known, all, snap.GetVersion(resource.VirtualHostType))
			}
			compact++
		}
	}
	if compact < 600 {
		t.Fatalf("only %d checks of up-to-date streams", compact)
	}
}

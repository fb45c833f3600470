package xds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// recordingPart is a watch part that records each step it is told of, and
// holds the route types while hold is set.
type recordingPart struct {
	events []string
	hold   bool
}

func (p *recordingPart) updated(_ *resourceCache, changes []typeChange) bool {
	types := map[string]bool{}
	for _, ch := range changes {
		types[keyType(ch.typeURL)] = true // delta streams' routes are routes (deltaroutes.go)
	}
	p.events = append(p.events, fmt.Sprintf("updated %d types", len(types)))
	return false
}

func (p *recordingPart) holds(_ *resourceCache, w *watch) bool {
	return p.hold && w.typeURL == resource.RouteType
}

func (p *recordingPart) owes(*resourceCache, *watch) xdsResponse { return nil }

func (p *recordingPart) settled(_ *resourceCache, at step, w *watch, r xdsResponse) {
	what := map[step]string{stepRequest: "request", stepUpdate: "update", stepRelease: "release", stepPart: "part"}[at]
	p.events = append(p.events, fmt.Sprintf("%s %s answered=%v held=%v", what, typeName(w.typeURL), r != nil, w.held))
}

func (p *recordingPart) closed(_ *resourceCache, s *streamState) {
	p.events = append(p.events, fmt.Sprintf("closed %d", s.key.id))
}

// TestWatchLifecycleSteps: SotW and delta watches go through the same
// steps, and a part is told of each the same way over both protocols: a
// request answered at once, its ACK stored, a watch a part holds stored
// held and left waiting by an update that answers the others, released by
// a recheck, and the stream's close.
func TestWatchLifecycleSteps(t *testing.T) {
	var got [2][]string
	for i, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s := quietServer()
			p := &recordingPart{}
			s.cache.parts = append(s.cache.parts, p)
			publishOK(t, s, switched(t, "a", "a", "b"))
			st := newADSStream(delta, 1, "a", "b")
			st.clusters.watch(t, s.cache, nil, nil)
			st.clusters.drain(t, s.cache) // answered, then its ACK stored
			p.hold = true
			st.routes.watch(t, s.cache, nil, nil)
			publishOK(t, s, switched(t, "b", "a", "b", "c")) // a cluster added, the route changed
			st.clusters.drain(t, s.cache)
			if st.routes.answers != 0 {
				t.Fatal("a held watch was answered")
			}
			p.hold = false
			s.cache.mu.Lock()
			s.cache.recheck()
			s.cache.mu.Unlock()
			st.routes.drain(t, s.cache)
			s.cache.forget(st.key)
			want := []string{
				"updated 7 types",
				"request cluster answered=true held=false",  // the first request
				"request cluster answered=false held=false", // its ACK, stored
				"request route answered=false held=true",    // held by the part
				"updated 3 types",
				"update cluster answered=true held=false", // the held route left waiting
				"request cluster answered=false held=false",
				"release route answered=true held=false", // the recheck
				"request route answered=false held=false",
				"closed 1",
			}
			if !slices.Equal(p.events, want) {
				t.Errorf("steps:\n%q\nwant\n%q", p.events, want)
			}
			got[i] = p.events
		})
	}
	if !slices.Equal(got[0], got[1]) {
		t.Errorf("SotW and delta differ:\n%q\n%q", got[0], got[1])
	}
}

// TestStreamsKnowTheirStoredWatches: each stream's own index of its
// stored watches (streamState.stored), which a recheck of one stream and
// the load assignments sent again after its clusters read instead of
// going through every stream's, is exactly what the cache has stored for
// it, through a random series of changes (endpoints, clusters coming and
// going, so make-before-break holds and releases route watches) answered
// to SotW and delta streams, some slow to acknowledge, some reconnecting.
func TestStreamsKnowTheirStoredWatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	f := fixture{listenerPort: 10000, clusters: map[string][]string{}}
	for i := range 6 {
		f.clusters[fmt.Sprintf("c%d", i)] = []string{fmt.Sprintf("127.0.0.1:%d", 8000+i)}
	}
	s := f.published(t)
	type stream struct {
		key     streamKey
		clients []*cacheClient
	}
	connect := func(key streamKey) stream {
		st := stream{key: key}
		for _, c := range []*cacheClient{
			newCacheClient("cds", key.delta, resource.ClusterType, nil),
			newCacheClient("lds", key.delta, resource.ListenerType, nil),
			newCacheClient("rds", key.delta, resource.RouteType, []string{fixtureRoute}),
			newCacheClient("eds", key.delta, resource.EndpointType, sortedKeys(f.clusters)),
		} {
			c.stream = &st.key
			c.slow = key.id%3 == 0
			c.watch(t, s.cache, c.names, nil)
			st.clients = append(st.clients, c)
		}
		return st
	}
	var streams []stream
	for i := range 8 {
		streams = append(streams, connect(streamKey{delta: i%2 == 1, id: int64(i + 1)}))
	}
	check := func(step int) {
		t.Helper()
		s.cache.mu.Lock()
		defer s.cache.mu.Unlock()
		want := map[*streamState]map[string]*watch{}
		for typeURL, ws := range s.cache.watches {
			for _, w := range ws {
				if w.stream == nil {
					continue
				}
				if want[w.stream] == nil {
					want[w.stream] = map[string]*watch{}
				}
				if want[w.stream][typeURL] != nil {
					t.Fatalf("step %d: stream %v has two stored watches of %s", step, w.stream.key, typeName(typeURL))
				}
				want[w.stream][typeURL] = w
			}
		}
		for key, st := range s.cache.streams {
			if !maps.Equal(st.stored, want[st]) {
				t.Fatalf("step %d: stream %v knows %v as its stored watches, the cache has %v", step, key, st.stored, want[st])
			}
		}
	}
	next := int64(100)
	for step := range 150 {
		switch op := rng.IntN(10); {
		case op < 5:
			names := sortedKeys(f.clusters)
			f.clusters[names[rng.IntN(len(names))]] = []string{fmt.Sprintf("127.0.0.2:%d", rng.IntN(50))}
		case op < 7:
			f.clusters[fmt.Sprintf("c%d", rng.IntN(12))] = []string{"127.0.0.3:80"}
		case op < 9:
			if names := sortedKeys(f.clusters); len(names) > 1 {
				delete(f.clusters, names[rng.IntN(len(names))])
			}
		default: // a stream goes, and another comes
			i := rng.IntN(len(streams))
			for _, c := range streams[i].clients {
				c.cancel()
			}
			s.cache.forget(streams[i].key)
			next++
			streams[i] = connect(streamKey{delta: next%2 == 1, id: next})
		}
		if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
			t.Fatal(err)
		}
		for _, st := range streams {
			for _, c := range st.clients {
				c.drain(t, s.cache)
			}
		}
		check(step)
	}
}

package xds

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// adsStream is one Envoy's ADS stream as the cache sees it: a client per
// type, every request bound to the stream (as the request callback binds
// it), the endpoints asked for by name as Envoy asks for its clusters'.
type adsStream struct {
	key                                    streamKey
	listeners, routes, clusters, endpoints *cacheClient
}

func newADSStream(delta bool, id int64, endpoints ...string) *adsStream {
	a := &adsStream{key: streamKey{delta: delta, id: id}}
	mk := func(typeURL string, names []string) *cacheClient {
		c := newCacheClient(fmt.Sprintf("stream %d %s", id, typeURL), delta, typeURL, names)
		c.stream = &a.key
		return c
	}
	a.listeners = mk(resource.ListenerType, nil)
	a.routes = mk(resource.RouteType, []string{fixtureRoute})
	a.clusters = mk(resource.ClusterType, nil)
	a.endpoints = mk(resource.EndpointType, endpoints)
	return a
}

func (a *adsStream) all() []*cacheClient {
	return []*cacheClient{a.clusters, a.endpoints, a.listeners, a.routes}
}

// open sends each type's first request and takes every answer.
func (a *adsStream) open(t *testing.T, rc *resourceCache) {
	t.Helper()
	for _, c := range a.all() {
		c.watch(t, rc, nil, nil)
	}
	a.drain(t, rc)
}

func (a *adsStream) drain(t *testing.T, rc *resourceCache) {
	t.Helper()
	for range 3 {
		for _, c := range a.all() {
			c.drain(t, rc)
		}
	}
}

// askEndpoints changes the load assignments the stream asks for, as Envoy
// does when its clusters change.
func (a *adsStream) askEndpoints(t *testing.T, rc *resourceCache, names ...string) {
	t.Helper()
	e := a.endpoints
	e.drain(t, rc) // what the server sent before the request
	if e.delta {
		var add, drop []string
		for _, n := range names {
			if !slices.Contains(e.names, n) {
				add = append(add, n)
			}
		}
		for _, n := range e.names {
			if !slices.Contains(names, n) {
				drop = append(drop, n)
			}
		}
		e.names = names
		e.watch(t, rc, add, drop)
		return
	}
	e.names = names
	e.watch(t, rc, nil, nil)
}

// switched is switchedTo's resources with every cluster at 127.0.0.1:1.
func switched(t *testing.T, target string, clusters ...string) *translate.Resources {
	t.Helper()
	m := map[string]string{}
	for _, c := range clusters {
		m[c] = "127.0.0.1:1"
	}
	return switchedTo(t, 10000, target, m)
}

func publishOK(t *testing.T, s *Server, r *translate.Resources) {
	t.Helper()
	if _, err := s.Publish(t.Context(), r); err != nil {
		t.Fatal(err)
	}
}

// quietServer is a Server that logs nothing, on a clock that moves only
// when a test steps it: no deadline of its own passes behind a test's back.
func quietServer() *Server {
	s, _ := steppedServer()
	return s
}

// steppedServer is quietServer with its clock.
func steppedServer() (*Server, *fakeClock) {
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c := newFakeClock()
	s.clock = c
	s.admission.clock = c
	return s, c
}

func clusterNames(s *Server) []string {
	return sortedKeys(s.Snapshot().GetResources(resource.ClusterType))
}

func wantClusters(t *testing.T, s *Server, why string, want ...string) {
	t.Helper()
	if got := clusterNames(s); !slices.Equal(got, want) {
		t.Fatalf("%s: published clusters %v, want %v", why, got, want)
	}
}

func eventuallyClusters(t *testing.T, s *Server, why string, want ...string) {
	t.Helper()
	eventually(t, why, func() error {
		if got := clusterNames(s); !slices.Equal(got, want) {
			return fmt.Errorf("published clusters %v, want %v", got, want)
		}
		return nil
	})
}

// releasedAfter steps the clock to just before d from now, where the
// clusters must still be kept, and then to d, where they must be gone.
func releasedAfter(t *testing.T, s *Server, c *fakeClock, d time.Duration, why string, kept, released []string) {
	t.Helper()
	c.Advance(d - time.Nanosecond)
	wantClusters(t, s, why+", a nanosecond before the deadline", kept...)
	c.Advance(time.Nanosecond)
	wantClusters(t, s, why+", at the deadline", released...)
}

// notYet is how far a test steps the clock to show that nothing lets a
// kept cluster go without its reason: well past releaseQuiet, well short of
// keepAtMost.
const notYet = keepAtMost / 2

// TestBreakAfterMakeHoldsRemovedCluster: a path switched from cluster a to
// a new cluster b, a removed by the same change. a stays published (its
// load assignment too) while the stream has the new routes but has not
// acknowledged them; the stream's first request of the routes after them
// lets it go, and the stream is then told a is gone. Over both protocols.
func TestBreakAfterMakeHoldsRemovedCluster(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s, c := steppedServer()
			publishOK(t, s, switched(t, "a", "a"))
			st := newADSStream(delta, 1, "a")
			st.open(t, s.cache)
			st.routes.slow = true // acknowledges at its next drain

			publishOK(t, s, switched(t, "b", "b"))
			wantClusters(t, s, "just switched", "a", "b")
			if got := sortedKeys(s.Snapshot().GetResources(resource.EndpointType)); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("just switched: published load assignments %v, want a's kept beside b's", got)
			}
			st.clusters.drain(t, s.cache)
			if got := sortedKeys(st.clusters.held); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("the stream holds clusters %v, want a kept beside b", got)
			}
			st.askEndpoints(t, s.cache, "a", "b")
			st.endpoints.drain(t, s.cache)
			st.routes.drain(t, s.cache) // the new routes, not acknowledged
			if st.routes.answers != 2 {
				t.Fatalf("routes answered %d times, want 2 (the first content, the switch)", st.routes.answers)
			}
			if got, want := c.pending(), []time.Duration{keepAtMost}; !slices.Equal(got, want) {
				t.Fatalf("timers armed to fire after %v, want only the bound %v", got, want)
			}
			c.Advance(notYet)
			wantClusters(t, s, "routes sent, not acknowledged", "a", "b")

			st.routes.drain(t, s.cache) // the acknowledgement
			releasedAfter(t, s, c, releaseQuiet, "after the routes' acknowledgement", []string{"a", "b"}, []string{"b"})
			st.drain(t, s.cache)
			if got := sortedKeys(st.clusters.held); !slices.Equal(got, []string{"b"}) {
				t.Fatalf("after a went, the stream holds clusters %v, want b", got)
			}
			if delta {
				if got := sortedKeys(st.endpoints.held); !slices.Equal(got, []string{"b"}) {
					t.Fatalf("after a went, the stream holds load assignments %v, want b", got)
				}
			}
		})
	}
}

// TestBreakAfterMakeReleasedByNACK: a stream that rejects the routes that
// stop using the removed cluster lets it go as an acknowledgement does
// (it keeps its old routes, which a 503 would have hit anyway after the
// bound).
func TestBreakAfterMakeReleasedByNACK(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s, c := steppedServer()
			publishOK(t, s, switched(t, "a", "a"))
			st := newADSStream(delta, 1, "a")
			st.open(t, s.cache)
			st.routes.slow = true
			publishOK(t, s, switched(t, "b", "b"))
			st.clusters.drain(t, s.cache)
			st.askEndpoints(t, s.cache, "a", "b")
			st.endpoints.drain(t, s.cache)
			st.routes.drain(t, s.cache)
			c.Advance(notYet)
			wantClusters(t, s, "routes sent", "a", "b")
			st.routes.nack = true
			st.routes.drain(t, s.cache) // the rejection
			releasedAfter(t, s, c, releaseQuiet, "after the routes' rejection", []string{"a", "b"}, []string{"b"})
		})
	}
}

// TestBreakAfterMakeEveryStream: the removed cluster stays until every
// stream that asks for routes has acknowledged them; a stream that closes
// meanwhile no longer counts; a stream that asks for no route type never
// did.
func TestBreakAfterMakeEveryStream(t *testing.T) {
	s, c := steppedServer()
	publishOK(t, s, switched(t, "a", "a"))
	fast, slow := newADSStream(true, 1, "a"), newADSStream(false, 2, "a")
	fast.open(t, s.cache)
	slow.open(t, s.cache)
	edsOnly := newCacheClient("endpoints only", true, resource.EndpointType, []string{"a"})
	edsOnly.stream = &streamKey{delta: true, id: 3}
	edsOnly.watch(t, s.cache, nil, nil)
	edsOnly.drain(t, s.cache)
	slow.routes.slow = true

	publishOK(t, s, switched(t, "b", "b"))
	for _, st := range []*adsStream{fast, slow} {
		st.clusters.drain(t, s.cache)
		st.askEndpoints(t, s.cache, "a", "b")
		st.endpoints.drain(t, s.cache)
		st.routes.drain(t, s.cache)
	}
	c.Advance(notYet)
	wantClusters(t, s, "one stream acknowledged, the other not", "a", "b")

	// The slow stream goes away; its watches are cancelled first
	// (assumption 3), then the close callback.
	for _, c := range slow.all() {
		c.cancel()
	}
	s.cache.forget(slow.key)
	releasedAfter(t, s, c, releaseQuiet, "the unacknowledging stream closed", []string{"a", "b"}, []string{"b"})
}

// TestBreakAfterMakeBounded: a stream that never acknowledges does not keep
// a removed cluster for longer than the bound.
func TestBreakAfterMakeBounded(t *testing.T) {
	s, c := steppedServer()
	publishOK(t, s, switched(t, "a", "a"))
	st := newADSStream(false, 1, "a")
	st.open(t, s.cache)
	st.routes.slow = true
	publishOK(t, s, switched(t, "b", "b"))
	wantClusters(t, s, "just switched", "a", "b")
	releasedAfter(t, s, c, keepAtMost, "never acknowledged", []string{"a", "b"}, []string{"b"})
}

// TestBreakAfterMakeBoundWaitsForQuiet: a removal that the bound lets go
// waits, like an acknowledged one, for releaseQuiet without a publish: one
// that came just before the bound puts the release off to releaseQuiet
// after it, not to the bound.
func TestBreakAfterMakeBoundWaitsForQuiet(t *testing.T) {
	s, c := steppedServer()
	publishOK(t, s, switched(t, "a", "a"))
	st := newADSStream(false, 1, "a")
	st.open(t, s.cache)
	st.routes.slow = true
	publishOK(t, s, switched(t, "b", "b"))
	const before = releaseQuiet / 4
	c.Advance(keepAtMost - before)
	publishOK(t, s, switched(t, "b", "b")) // the same again: a publish all the same
	wantClusters(t, s, "published again before the bound", "a", "b")
	c.Advance(before)
	wantClusters(t, s, "at the bound, a publish less than releaseQuiet ago", "a", "b")
	releasedAfter(t, s, c, releaseQuiet-before, "the bound passed", []string{"a", "b"}, []string{"b"})
}

// TestBreakAfterMakeNothingKeptWithoutStreams: with no stream asking for
// routes, a removal is published as it is; a cluster kept and produced
// again is the translator's again, not removed when the kept ones go.
func TestBreakAfterMakeNothingKeptWithoutStreams(t *testing.T) {
	s, c := steppedServer()
	publishOK(t, s, switched(t, "a", "a"))
	publishOK(t, s, switched(t, "b", "b"))
	wantClusters(t, s, "no stream", "b")

	st := newADSStream(true, 1, "b")
	st.open(t, s.cache)
	st.routes.slow = true
	publishOK(t, s, switched(t, "c", "c"))
	wantClusters(t, s, "b switched to c", "b", "c")
	publishOK(t, s, switched(t, "b", "b", "c")) // back to b, c still there
	st.drain(t, s.cache)
	st.askEndpoints(t, s.cache, "b", "c")
	st.drain(t, s.cache)
	st.routes.drain(t, s.cache)
	c.Advance(notYet)
	wantClusters(t, s, "b produced again", "b", "c")
	publishOK(t, s, switched(t, "b", "b")) // c goes
	wantClusters(t, s, "c removed", "b", "c")
	st.drain(t, s.cache)
	st.routes.drain(t, s.cache)
	releasedAfter(t, s, c, releaseQuiet, "c's removal acknowledged", []string{"b", "c"}, []string{"b"})
}

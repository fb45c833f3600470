package xds

import (
	"maps"
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestMakeBeforeBreakHoldsRouteTypes: after a change adds cluster b, the
// part holds a stream's route types (routes, listeners) until the stream
// has acknowledged b's load assignment, and holds nothing else (the
// clusters and endpoints go at once); the acknowledgement releases the
// held watches with what they missed. A stream that never asked for load
// assignments is never held. Over both protocols.
func TestMakeBeforeBreakHoldsRouteTypes(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s := quietServer()
			publishOK(t, s, switched(t, "a", "a"))
			st := newADSStream(delta, 1, "a")
			st.open(t, s.cache)
			routesOnly := newCacheClient("routes only", delta, resource.RouteType, []string{fixtureRoute})
			routesOnly.stream = &streamKey{delta: delta, id: 2}
			routesOnly.watch(t, s.cache, nil, nil)
			routesOnly.drain(t, s.cache)

			publishOK(t, s, switched(t, "b", "a", "b"))
			routes, clusters, others := st.routes.answers, st.clusters.answers, routesOnly.answers
			st.routes.drain(t, s.cache)
			st.clusters.drain(t, s.cache)
			routesOnly.drain(t, s.cache)
			if st.routes.answers != routes {
				t.Fatal("the routes were sent before the stream had b's endpoints")
			}
			if st.clusters.answers != clusters+1 {
				t.Fatalf("clusters answered %d times, want %d: only the route types wait", st.clusters.answers, clusters+1)
			}
			if routesOnly.answers != others+1 {
				t.Fatalf("a stream that never asked for endpoints: routes answered %d times, want %d", routesOnly.answers, others+1)
			}
			st.askEndpoints(t, s.cache, "a", "b")
			st.routes.drain(t, s.cache)
			if st.routes.answers != routes {
				t.Fatal("the routes were sent before the stream acknowledged b's endpoints")
			}
			st.endpoints.drain(t, s.cache) // b's endpoints, and their ACK
			st.routes.drain(t, s.cache)
			if st.routes.answers != routes+1 {
				t.Fatalf("after b's endpoints were acknowledged, routes answered %d times, want %d", st.routes.answers, routes+1)
			}
			st.routes.check(t, s.Snapshot())
		})
	}
}

// TestMakeBeforeBreakPart calls the part as the lifecycle does: it holds
// a bound watch of a route type while fresh load assignments are not
// acknowledged, and nothing else; a cluster change asks for a recheck.
func TestMakeBeforeBreakPart(t *testing.T) {
	c := newResourceCache(nil)
	m := &c.mbb
	key := streamKey{id: 1}
	st := c.streamFor(key)
	st.gate.eds = true
	clusters := &typeSnapshot{}
	if m.updated(c, []typeChange{{typeURL: resource.RouteType, state: &typeSnapshot{}}}) {
		t.Fatal("a route change asked for a recheck")
	}
	if !m.updated(c, []typeChange{{typeURL: resource.ClusterType, state: clusters}}) {
		t.Fatal("a cluster change did not ask for a recheck")
	}
	m.fresh, m.freshAll = []string{"b"}, []string{"b"}
	for _, typeURL := range []string{resource.ListenerType, resource.RouteType, resource.VirtualHostType} {
		if !m.holds(c, &watch{typeURL: typeURL, stream: st}) {
			t.Errorf("%s not held while b is not acknowledged", typeURL)
		}
	}
	for _, typeURL := range []string{resource.ClusterType, resource.EndpointType, resource.SecretType, resource.ScopedRouteType} {
		if m.holds(c, &watch{typeURL: typeURL, stream: st}) {
			t.Errorf("%s held", typeURL)
		}
	}
	st.gate.edsAcked = m.gen
	if m.holds(c, &watch{typeURL: resource.RouteType, stream: st}) {
		t.Error("routes held after b was acknowledged")
	}
	if !slices.Equal(m.fresh, []string{"b"}) {
		t.Fatalf("fresh %v", m.fresh)
	}
}

// TestMakeBeforeBreakNACKs: routes held for a new cluster's load
// assignment are released when the stream rejects the clusters (it will
// never ask for the new endpoints) or rejects the endpoints (it asked and
// was sent them), not held forever.
func TestMakeBeforeBreakNACKs(t *testing.T) {
	for _, delta := range []bool{false, true} {
		for _, rejects := range []string{"clusters", "endpoints"} {
			t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta]+"/"+rejects, func(t *testing.T) {
				s := quietServer()
				publishOK(t, s, switched(t, "a", "a"))
				st := newADSStream(delta, 1, "a")
				st.open(t, s.cache)
				publishOK(t, s, switched(t, "b", "a", "b"))
				before := st.routes.answers
				st.routes.drain(t, s.cache)
				if st.routes.answers != before {
					t.Fatal("the routes were sent before the stream had b's endpoints")
				}
				if rejects == "clusters" {
					st.clusters.nack = true
					st.clusters.drain(t, s.cache)
				} else {
					st.clusters.drain(t, s.cache)
					st.askEndpoints(t, s.cache, "a", "b")
					st.routes.drain(t, s.cache)
					if st.routes.answers != before {
						t.Fatal("the routes were sent before the stream answered b's endpoints")
					}
					st.endpoints.nack = true
					st.endpoints.drain(t, s.cache)
				}
				st.routes.drain(t, s.cache)
				if st.routes.answers != before+1 {
					t.Fatalf("after the stream rejected the %s, routes answered %d times, want %d", rejects, st.routes.answers, before+1)
				}
			})
		}
	}
}

// TestMakeBeforeBreakSharedLoadAssignment: clusters that take their
// endpoints from one load assignment named otherwise (a backend's policy
// clusters: eds_cluster_config.service_name) are waited for by that
// assignment's name.
func TestMakeBeforeBreakSharedLoadAssignment(t *testing.T) {
	s := quietServer()
	publishOK(t, s, switched(t, "a", "a"))
	st := newADSStream(true, 1, "a")
	st.open(t, s.cache)
	r := switched(t, "s-p1", "a")
	for _, name := range []string{"s-p1", "s-p2"} {
		c := edsCluster(name)
		c.EdsClusterConfig.ServiceName = "s"
		r.Clusters = append(r.Clusters, c)
	}
	r.Endpoints = append(r.Endpoints, loadAssignment(t, "s", []string{"127.0.0.1:2"}))
	publishOK(t, s, r)
	if !slices.Equal(s.cache.mbb.fresh, []string{"s"}) {
		t.Fatalf("routes wait for %v, want the policy clusters' load assignment s", s.cache.mbb.fresh)
	}
	before := st.routes.answers
	st.clusters.drain(t, s.cache)
	st.routes.drain(t, s.cache)
	if st.routes.answers != before {
		t.Fatal("the routes were sent before the stream had s")
	}
	st.askEndpoints(t, s.cache, "a", "s")
	st.endpoints.drain(t, s.cache)
	st.routes.drain(t, s.cache)
	if st.routes.answers != before+1 {
		t.Fatalf("after s was acknowledged, routes answered %d times, want %d", st.routes.answers, before+1)
	}
}

// TestHeldSubscriptionNotLost: a delta request that subscribes to a route
// configuration while the stream's route watches are held back
// (make-before-break), and that the stream's next request cancels before
// the hold ends, naming nothing new, still gets its configuration: the
// next watch compares everything the client holds rather than read its own
// request's names alone. Seen with a real Envoy: the HTTPS listener's
// default filter chain came with a new route configuration while its
// clusters warmed, Envoy subscribed to it, and the acknowledgement that
// followed left it unsent until Envoy's initial fetch timed out.
func TestHeldSubscriptionNotLost(t *testing.T) {
	s := quietServer()
	r := switched(t, "a", "a")
	second := httpListener(t, "second", 10001)
	hcm := &hcmv3.HttpConnectionManager{}
	if err := second.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(hcm); err != nil {
		t.Fatal(err)
	}
	hcm.GetRds().RouteConfigName = "second"
	if err := second.FilterChains[0].Filters[0].GetTypedConfig().MarshalFrom(hcm); err != nil {
		t.Fatal(err)
	}
	r.Listeners = append(r.Listeners, second)
	r.Routes = append(r.Routes, &routev3.RouteConfiguration{Name: "second"})
	publishOK(t, s, r)
	c := newCacheClient("routes", true, resource.RouteType, []string{fixtureRoute})
	c.stream = &streamKey{delta: true, id: 1}
	c.watch(t, s.cache, []string{fixtureRoute}, nil)
	c.drain(t, s.cache)
	if _, ok := c.held[fixtureRoute]; !ok {
		t.Fatalf("the first route configuration not sent: %v", c.held)
	}

	s.cache.mu.Lock()
	st := s.cache.streamFor(*c.stream)
	st.gate.eds = true
	s.cache.mbb.fresh = []string{"b"}
	s.cache.mu.Unlock()
	c.watch(t, s.cache, []string{"second"}, nil) // held back
	if len(c.dOut) != 0 {
		t.Fatal("a held watch was answered")
	}

	s.cache.mu.Lock()
	st.gate.edsAcked = s.cache.mbb.gen
	s.cache.mbb.fresh = nil
	s.cache.mu.Unlock()
	c.watch(t, s.cache, nil, nil) // cancels the held watch, names nothing
	c.drain(t, s.cache)
	if _, ok := c.held["second"]; !ok {
		t.Fatalf("the route configuration subscribed to while held was never sent: %v", slices.Sorted(maps.Keys(c.held)))
	}
}

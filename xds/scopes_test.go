package xds

import (
	"fmt"
	"slices"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// scoped is switched's resources with route scopes, each on the fixture's
// route configuration, keyed by the value given.
func scoped(t *testing.T, keys map[string]string) []*routev3.ScopedRouteConfiguration {
	t.Helper()
	var out []*routev3.ScopedRouteConfiguration
	for _, name := range sortedKeys(keys) {
		out = append(out, &routev3.ScopedRouteConfiguration{
			Name: name, RouteConfigurationName: fixtureRoute,
			Key: &routev3.ScopedRouteConfiguration_Key{Fragments: []*routev3.ScopedRouteConfiguration_Key_Fragment{
				{Type: &routev3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: keys[name]}},
			}},
		})
	}
	return out
}

// TestScopesSotWAnswersHoldEveryScope: Envoy takes a SotW answer of
// scopes as every scope there is, so a change of one scope sends them
// all, as for listeners and clusters; route configurations, which a SotW
// answer may send alone, are sent only as they change.
func TestScopesSotWAnswersHoldEveryScope(t *testing.T) {
	s := quietServer()
	r := switched(t, "a", "a")
	r.ScopedRoutes = scoped(t, map[string]string{"s1": "0", "s2": "1"})
	publishOK(t, s, r)
	c := newCacheClient("scopes", false, resource.ScopedRouteType, nil)
	c.watch(t, s.cache, nil, nil)
	c.drain(t, s.cache)
	if got := sortedKeys(c.held); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Fatalf("holds %v, want s1 and s2", got)
	}
	r2 := *r
	r2.ScopedRoutes = scoped(t, map[string]string{"s1": "0", "s2": "2"})
	r2.ScopedRoutes[0] = r.ScopedRoutes[0] // s1 unchanged
	publishOK(t, s, &r2)
	select {
	case resp := <-c.sotwOut:
		out, err := resp.GetDiscoveryResponse()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, a := range out.GetResources() {
			names = append(names, decodedName(t, resource.ScopedRouteType, a))
		}
		if !slices.Equal(names, []string{"s1", "s2"}) {
			t.Fatalf("a change of s2 sent %v, want every scope", names)
		}
	default:
		t.Fatal("a change of s2 was not sent")
	}
}

// TestScopesPart: the part marks the full-state types' content: scopes,
// listeners and clusters, not routes or load assignments.
func TestScopesPart(t *testing.T) {
	for typeURL, want := range map[string]bool{
		resource.ScopedRouteType: true, resource.ListenerType: true, resource.ClusterType: true,
		resource.RouteType: false, resource.EndpointType: false, resource.SecretType: false, resource.VirtualHostType: false,
	} {
		ts := &typeSnapshot{}
		(scopes{}).updated(nil, []typeChange{{typeURL: typeURL, state: ts}})
		if ts.fullState != want {
			t.Errorf("%s: fullState %v, want %v", typeURL, ts.fullState, want)
		}
	}
}

// TestBreakAfterMakeKeepsRemovedScopes: when the HTTP listener goes back
// from route scopes to one route configuration, the scopes and the route
// configurations they name stay published for keepRouteFormsFor, whether
// or not the stream has acknowledged the route types of that change (the
// listener that still routes through them serves until Envoy has the new
// one warmed, then drains its connections through them: without them
// every request would answer 404 meanwhile), then go. Over both
// protocols.
func TestBreakAfterMakeKeepsRemovedScopes(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s, c := steppedServer()
			withScopes := switched(t, "a", "a")
			withScopes.ScopedRoutes = scoped(t, map[string]string{"s0": "0", "s1": "1"})
			// The listener routes through the scopes: another listener
			// than the unscoped one.
			l := proto.Clone(withScopes.Listeners[0]).(*listenerv3.Listener)
			l.StatPrefix = "scoped"
			withScopes.Listeners = []*listenerv3.Listener{l}
			for i, sc := range withScopes.ScopedRoutes {
				sc.RouteConfigurationName = fmt.Sprintf("scoped/%d", i)
				withScopes.Routes = append(withScopes.Routes, &routev3.RouteConfiguration{Name: sc.RouteConfigurationName})
			}
			publishOK(t, s, withScopes)
			st := newADSStream(delta, 1, "a")
			st.open(t, s.cache)
			st.routes.slow = true // acknowledges at its next drain
			st.listeners.slow = true

			publishOK(t, s, switched(t, "a", "a"))
			scopesAndRoutes := func() ([]string, []string) {
				return sortedKeys(s.Snapshot().GetResources(resource.ScopedRouteType)), sortedKeys(s.Snapshot().GetResources(resource.RouteType))
			}
			if scopes, routes := scopesAndRoutes(); !slices.Equal(scopes, []string{"s0", "s1"}) || !slices.Equal(routes, []string{fixtureRoute, "scoped/0", "scoped/1"}) {
				t.Fatalf("just unscoped: published scopes %v and routes %v, want the scopes and their routes kept", scopes, routes)
			}
			st.listeners.drain(t, s.cache) // the new listener, not acknowledged
			c.Advance(keepRouteFormsFor / 2)
			if scopes, _ := scopesAndRoutes(); len(scopes) != 2 {
				t.Fatalf("routes sent, not acknowledged: published scopes %v, want both kept", scopes)
			}
			st.listeners.drain(t, s.cache) // the acknowledgement
			c.Advance(releaseQuiet)
			if scopes, _ := scopesAndRoutes(); len(scopes) != 2 {
				t.Fatalf("acknowledged, within keepRouteFormsFor: published scopes %v, want both kept for the old listener's draining connections", scopes)
			}
			c.Advance(keepRouteFormsFor/2 - releaseQuiet)
			if scopes, routes := scopesAndRoutes(); len(scopes) != 0 || !slices.Equal(routes, []string{fixtureRoute}) {
				t.Fatalf("after keepRouteFormsFor: published scopes %v and routes %v, want none and %s", scopes, routes, fixtureRoute)
			}
		})
	}
}

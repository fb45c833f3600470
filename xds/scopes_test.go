package xds

import (
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
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

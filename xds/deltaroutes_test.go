package xds

import (
	"maps"
	"slices"
	"testing"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate"
)

// bothForms is f's resources with the route configuration whole for SotW
// streams and, for delta streams, in its VHDS form (deltaroutes.go), as
// the translator renders them under serve --delta-vhds; with whole alone
// (delta false), every stream gets the route configuration whole.
func bothForms(t *testing.T, f vhdsFixture, prev map[string]*routev3.VirtualHost, delta bool) (*translate.Resources, map[string]*routev3.VirtualHost) {
	t.Helper()
	r, made := f.resources(t, prev)
	whole := &routev3.RouteConfiguration{Name: fixtureRoute}
	for _, vh := range r.VirtualHosts {
		inline := proto.Clone(vh).(*routev3.VirtualHost)
		inline.Name = vh.GetName()[len(fixtureRoute)+1:]
		whole.VirtualHosts = append(whole.VirtualHosts, inline)
	}
	if delta {
		r.DeltaRoutes = r.Routes
	} else {
		r.VirtualHosts = nil
	}
	r.Routes = []*routev3.RouteConfiguration{whole}
	return r, made
}

// TestDeltaRoutesPerProtocol: one cache serves a SotW stream the route
// configuration whole and a delta stream its VHDS form, the virtual hosts
// as resources of their own. A new host then sends the SotW stream the
// route configuration again and the delta stream that one virtual host,
// and no route configuration. When the translator stops giving a VHDS form
// (route scopes past the line), the delta stream is sent the route
// configuration whole and told its virtual hosts are gone.
func TestDeltaRoutesPerProtocol(t *testing.T) {
	s := quietServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{"a.example": {"/": "a"}}}
	r, made := bothForms(t, f, nil, true)
	publishOK(t, s, r)
	sotw := newCacheClient("sotw routes", false, resource.RouteType, []string{fixtureRoute})
	delta := newCacheClient("delta routes", true, resource.RouteType, []string{fixtureRoute})
	vhosts := newCacheClient("delta virtual hosts", true, resource.VirtualHostType, []string{fixtureRoute})
	for _, c := range []*cacheClient{sotw, delta, vhosts} {
		c.watch(t, s.cache, c.names, nil)
		c.drain(t, s.cache)
	}
	routeOf := func(c *cacheClient) *routev3.RouteConfiguration {
		t.Helper()
		a := c.held[fixtureRoute]
		if a == nil {
			t.Fatalf("%s: holds no route configuration %s", c.name, fixtureRoute)
		}
		rc := &routev3.RouteConfiguration{}
		if err := a.UnmarshalTo(rc); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	if rc := routeOf(sotw); len(rc.GetVirtualHosts()) != 1 || rc.GetVhds() != nil {
		t.Fatalf("SotW: %d virtual hosts inline, VHDS %v; want 1, none", len(rc.GetVirtualHosts()), rc.GetVhds())
	}
	if rc := routeOf(delta); len(rc.GetVirtualHosts()) != 0 || rc.GetVhds() == nil {
		t.Fatalf("delta: %d virtual hosts inline, VHDS %v; want none, over VHDS", len(rc.GetVirtualHosts()), rc.GetVhds())
	}
	if got := sortedKeys(vhosts.held); len(got) != 1 || got[0] != fixtureRoute+"/a.example" {
		t.Fatalf("delta: virtual hosts %v, want a.example's", got)
	}

	f.hosts["b.example"] = map[string]string{"/": "a"}
	r, _ = bothForms(t, f, made, true)
	answers := map[*cacheClient]int{sotw: sotw.answers, delta: delta.answers, vhosts: vhosts.answers}
	publishOK(t, s, r)
	for c := range answers {
		c.drain(t, s.cache)
	}
	if sotw.answers != answers[sotw]+1 || len(routeOf(sotw).GetVirtualHosts()) != 2 {
		t.Errorf("SotW: %d answers for a new host, %d virtual hosts; want 1, 2", sotw.answers-answers[sotw], len(routeOf(sotw).GetVirtualHosts()))
	}
	if delta.answers != answers[delta] {
		t.Errorf("delta: a new host sent the route configuration again (%d answers)", delta.answers-answers[delta])
	}
	if vhosts.answers != answers[vhosts]+1 || len(vhosts.held) != 2 {
		t.Errorf("delta: %d answers of virtual hosts for a new host, holding %v; want 1, both", vhosts.answers-answers[vhosts], sortedKeys(vhosts.held))
	}

	r, _ = bothForms(t, f, made, false)
	publishOK(t, s, r)
	for c := range answers {
		c.drain(t, s.cache)
	}
	if rc := routeOf(delta); len(rc.GetVirtualHosts()) != 2 || rc.GetVhds() != nil {
		t.Errorf("delta, no VHDS form: %d virtual hosts inline, VHDS %v; want 2, none", len(rc.GetVirtualHosts()), rc.GetVhds())
	}
	if len(vhosts.held) != 0 {
		t.Errorf("delta, no VHDS form: still holds virtual hosts %v", sortedKeys(vhosts.held))
	}
	if rc := routeOf(sotw); len(rc.GetVirtualHosts()) != 2 {
		t.Errorf("SotW: %d virtual hosts, want 2", len(rc.GetVirtualHosts()))
	}
}

// TestDeltaVirtualHostsFollowTheirRoutes: a delta stream's virtual hosts
// wait until it holds the route configuration that takes them over VHDS,
// and are all sent again when it is sent that configuration anew. A delta
// Envoy subscribes to virtual hosts when it takes such a route
// configuration, and a subscription started after the virtual hosts came
// waits for more until its initial fetch times out, the listener warming
// all along (docs/xds-cache.md: a delta Envoy's routes going from route
// scopes back to one table, where its new listener's route configuration
// came after the virtual hosts).
func TestDeltaVirtualHostsFollowTheirRoutes(t *testing.T) {
	s := quietServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{"a.example": {"/": "a"}, "b.example": {"/": "a"}}}
	key := streamKey{delta: true, id: 7}
	routes := newCacheClient("delta routes", true, resource.RouteType, []string{fixtureRoute})
	vhosts := newCacheClient("delta virtual hosts", true, resource.VirtualHostType, nil) // Envoy's VHDS asks as a wildcard
	routes.stream, vhosts.stream = &key, &key

	r, made := bothForms(t, f, nil, true)
	publishOK(t, s, r)
	vhosts.watch(t, s.cache, nil, nil)
	vhosts.drain(t, s.cache)
	if len(vhosts.held) != 0 {
		t.Fatalf("sent virtual hosts %v before their route configuration", sortedKeys(vhosts.held))
	}
	routes.watch(t, s.cache, routes.names, nil)
	routes.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	if len(routes.held) != 1 || len(vhosts.held) != 2 {
		t.Fatalf("holds routes %v, virtual hosts %v; want the route configuration, then both virtual hosts", sortedKeys(routes.held), sortedKeys(vhosts.held))
	}

	// Envoy's route configuration goes with its listener: it unsubscribes,
	// and its VHDS subscription drops the virtual hosts without a word.
	routes.watch(t, s.cache, nil, routes.names)
	routes.drain(t, s.cache)
	vhosts.held = map[string]*anypb.Any{}
	f.hosts["c.example"] = map[string]string{"/": "a"}
	r, _ = bothForms(t, f, made, true)
	publishOK(t, s, r)
	vhosts.drain(t, s.cache)
	if len(vhosts.held) != 0 {
		t.Fatalf("sent virtual hosts %v to a stream that holds no route configuration of theirs", sortedKeys(vhosts.held))
	}
	// A new listener's route configuration of the same name.
	routes.watch(t, s.cache, routes.names, nil)
	routes.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	want := []string{fixtureRoute + "/a.example", fixtureRoute + "/b.example", fixtureRoute + "/c.example"}
	if got := sortedKeys(vhosts.held); !slices.Equal(got, want) {
		t.Fatalf("sent the route configuration anew, then virtual hosts %v; want all of them again %v", got, want)
	}
}

// TestBreakAfterMakeKeepsRemovedVHDS: when the translator stops giving the
// VHDS form (the HTTP listener going to route scopes), the delta streams'
// route configuration and its virtual hosts stay published for
// keepRouteFormsFor, acknowledged or not, then go: the listener that routes
// through them drains its connections for Envoy's drain time, and Envoy
// applies the removal of virtual hosts to it at once.
func TestBreakAfterMakeKeepsRemovedVHDS(t *testing.T) {
	s, c := steppedServer()
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{"a.example": {"/": "a"}}}
	r, made := bothForms(t, f, nil, true)
	publishOK(t, s, r)
	st := newADSStream(true, 1, "a")
	st.open(t, s.cache)
	vhosts := newCacheClient("delta virtual hosts", true, resource.VirtualHostType, nil)
	vhosts.stream = &st.key
	vhosts.watch(t, s.cache, nil, nil)
	vhosts.drain(t, s.cache)
	if len(vhosts.held) != 1 {
		t.Fatalf("holds virtual hosts %v, want a.example's", sortedKeys(vhosts.held))
	}

	r, _ = bothForms(t, f, made, false)
	publishOK(t, s, r)
	st.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	c.Advance(keepRouteFormsFor - time.Nanosecond)
	st.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	if got := sortedKeys(s.Snapshot().GetResources(resource.VirtualHostType)); len(got) != 1 || len(vhosts.held) != 1 {
		t.Fatalf("a nanosecond before keepRouteFormsFor, acknowledged: published virtual hosts %v, the stream holds %v; want a.example's kept", got, sortedKeys(vhosts.held))
	}
	c.Advance(time.Nanosecond)
	st.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	if got := sortedKeys(s.Snapshot().GetResources(resource.VirtualHostType)); len(got) != 0 || len(vhosts.held) != 0 {
		t.Fatalf("after keepRouteFormsFor: published virtual hosts %v, the stream holds %v; want none", got, sortedKeys(vhosts.held))
	}
	if n := len(s.Snapshot().deltaRoutes.vhdsRoutes); n != 0 {
		t.Errorf("after keepRouteFormsFor: %d route configurations over VHDS for delta streams, want none", n)
	}
}

// TestDeltaVirtualHostsOfAReconnectedEnvoy: an Envoy that reconnects to a
// control plane that has published nothing yet (one that started over)
// names what it holds among its initial versions, the route configuration
// taking its virtual hosts over VHDS included, and is sent nothing for it
// at the first content; its virtual hosts are not held back for a route
// configuration it holds, and a new host reaches it.
func TestDeltaVirtualHostsOfAReconnectedEnvoy(t *testing.T) {
	f := vhdsFixture{port: 10000, clusters: map[string]string{"a": "127.0.0.1:1"}, hosts: map[string]map[string]string{"a.example": {"/": "a"}}}
	r, made := bothForms(t, f, nil, true)
	before := quietServer()
	publishOK(t, before, r)
	held := func(typeURL string) map[string]string {
		return maps.Clone(before.Snapshot().versionMapOf(typeURL, true))
	}

	s := quietServer()
	key := streamKey{delta: true, id: 1}
	routes := newCacheClient("delta routes", true, resource.RouteType, []string{fixtureRoute})
	vhosts := newCacheClient("delta virtual hosts", true, resource.VirtualHostType, nil)
	routes.sub = stream.NewDeltaSubscription(routes.names, nil, held(resource.RouteType), true)
	vhosts.sub = stream.NewDeltaSubscription(nil, nil, held(resource.VirtualHostType), true)
	for _, c := range []*cacheClient{routes, vhosts} {
		c.stream = &key
		c.watch(t, s.cache, c.names, nil)
	}
	publishOK(t, s, r)
	routes.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	f.hosts["b.example"] = map[string]string{"/": "a"}
	r, _ = bothForms(t, f, made, true)
	publishOK(t, s, r)
	routes.drain(t, s.cache)
	vhosts.drain(t, s.cache)
	if _, ok := vhosts.held[fixtureRoute+"/b.example"]; !ok {
		t.Fatalf("a new host after the reconnection: the Envoy was sent %v, want b.example's virtual host", sortedKeys(vhosts.held))
	}
}

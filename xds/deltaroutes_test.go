package xds

import (
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

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

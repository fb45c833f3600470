package translate

import (
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestMerge holds merge to its rules: a host or alias the Ingresses serve
// is theirs (the Route told, its clusters gone with it), a port both have
// keeps the Ingress listener, one name is one value (the Ingress's), and
// the result keeps the IR's contract.
func TestMerge(t *testing.T) {
	be := func(name string) *ir.Backend {
		return &ir.Backend{Name: name, Port: 80, Endpoints: []ir.Endpoint{{Address: "10.0.0.1", Port: 8080}}}
	}
	cl := func(name string) *ir.Cluster { return &ir.Cluster{Name: name, Backend: name} }
	fwd := func(cluster string, src *ir.Object) *ir.Route {
		return &ir.Route{Match: ir.Match{PathType: ir.PathPrefix, Path: "/"}, Source: src,
			Action: ir.Action{Forward: &ir.Forward{Clusters: []ir.WeightedCluster{{Cluster: cluster, Weight: 1}}}}}
	}
	ingress := &ir.Object{Kind: "Ingress", Namespace: "default", Name: "legacy"}
	route := &ir.Object{Kind: "HTTPRoute", Namespace: "default", Name: "modern"}
	shared := be("default/shared/80")
	ingHTTP := &ir.Listener{Name: "ingress_http", Address: "0.0.0.0", Port: 8080, Protocol: ir.HTTP}
	ing := &ir.IR{
		Listeners: []*ir.Listener{ingHTTP},
		VirtualHosts: []*ir.VirtualHost{
			{Host: "a.example.com", Aliases: []string{"alias.example.com"}, Routes: []*ir.Route{fwd("default/shared/80", ingress)}},
		},
		Clusters: []*ir.Cluster{cl("default/shared/80")},
		Backends: []*ir.Backend{shared},
		Problems: []ir.Problem{},
	}
	mirrored := fwd("default/shared/80", route)
	mirrored.Policy = &ir.RoutePolicy{Mirrors: []ir.Mirror{{Cluster: "default/shadow/80", Percent: 10}}}
	gw := &ir.IR{
		Listeners: []*ir.Listener{
			{Name: "ingress_http", Address: "0.0.0.0", Port: 8080, Protocol: ir.HTTP},
			{Name: "ingress_https", Address: "0.0.0.0", Port: 8443, Protocol: ir.HTTPS},
		},
		VirtualHosts: []*ir.VirtualHost{
			{Host: "a.example.com", Routes: []*ir.Route{fwd("default/lost/80", route)}},
			{Host: "alias.example.com", Routes: []*ir.Route{fwd("default/lost/80", route)}},
			{Host: "b.example.com", Routes: []*ir.Route{mirrored}},
		},
		Clusters: []*ir.Cluster{cl("default/lost/80"), cl("default/shadow/80"), cl("default/shared/80")},
		Backends: []*ir.Backend{be("default/lost/80"), be("default/shadow/80"), be("default/shared/80")},
		Problems: []ir.Problem{},
	}
	m := merge(ing, gw)
	if err := m.Validate(); err != nil {
		t.Fatalf("the merged IR breaks its contract: %v", err)
	}
	var hosts, clusters, listeners []string
	for _, vh := range m.VirtualHosts {
		hosts = append(hosts, vh.Host)
	}
	for _, c := range m.Clusters {
		clusters = append(clusters, c.Name)
	}
	for _, l := range m.Listeners {
		listeners = append(listeners, l.Name)
	}
	if want := []string{"a.example.com", "b.example.com"}; !slices.Equal(hosts, want) {
		t.Errorf("hosts %v, want %v", hosts, want)
	}
	if m.VirtualHosts[0] != ing.VirtualHosts[0] {
		t.Error("the Ingresses' host was replaced")
	}
	if want := []string{"default/shadow/80", "default/shared/80"}; !slices.Equal(clusters, want) {
		t.Errorf("clusters %v, want %v (the dropped hosts' cluster gone, the mirror's kept)", clusters, want)
	}
	if m.Backends[1] != shared {
		t.Error("a backend both name is not the Ingress front-end's value")
	}
	if want := []string{"ingress_http", "ingress_https"}; !slices.Equal(listeners, want) {
		t.Errorf("listeners %v, want %v", listeners, want)
	}
	if m.Listeners[0] != ingHTTP {
		t.Error("a port both have does not keep the Ingress front-end's listener")
	}
	var reasons []string
	for _, p := range m.Problems {
		reasons = append(reasons, p.Reason+" "+p.Message)
	}
	if want := []string{
		"HostConflict host a.example.com is served by Ingresses: the Route's rules for it are not served",
		"HostConflict host alias.example.com is an alias of the Ingresses' host a.example.com: the Route's rules for it are not served",
	}; !slices.Equal(reasons, want) {
		t.Errorf("problems %q, want %q", reasons, want)
	}
	if merge(ing, nil) != ing {
		t.Error("without Gateway API objects the Ingress IR is not passed through")
	}
}

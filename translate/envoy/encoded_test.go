package envoy

import (
	"bytes"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A valid load assignment is kept as its encoding, which is the whole
// message's deterministic encoding; read through reflection (as protojson,
// proto.Clone and Expand do) it is the whole message.
func TestLoadAssignmentsAreKeptEncoded(t *testing.T) {
	be := &ir.Backend{Name: "default/web/80", Endpoints: []ir.Endpoint{{Address: "10.0.0.1", Port: 8080}, {Address: "10.0.0.2", Port: 8080}}}
	encoded, ok := loadAssignment(be).(*EncodedLoadAssignment)
	if !ok {
		t.Fatalf("load assignment not kept encoded: %T", loadAssignment(be))
	}
	if encoded.GetClusterName() != be.Name || encoded.GetName() != be.Name {
		t.Fatalf("cluster name %q, name %q, want %q", encoded.GetClusterName(), encoded.GetName(), be.Name)
	}
	whole := &endpointv3.ClusterLoadAssignment{ClusterName: be.Name, Endpoints: []*endpointv3.LocalityLbEndpoints{{}}}
	for _, ep := range be.Endpoints {
		whole.Endpoints[0].LbEndpoints = append(whole.Endpoints[0].LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(ep.Address, uint32(ep.Port))}},
		})
	}
	want, err := proto.MarshalOptions{Deterministic: true}.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encoded.Encoding(), want) {
		t.Fatalf("encoding %x, want the whole message's %x", encoded.Encoding(), want)
	}
	encodesAs(t, encoded, whole)
	if clone := proto.Clone(encoded); !proto.Equal(clone, whole) {
		t.Fatalf("read through reflection: %v, want %v", clone, whole)
	}
}

// An invalid load assignment stays whole, for validation to report it.
func TestInvalidLoadAssignmentStaysWhole(t *testing.T) {
	be := &ir.Backend{Name: "default/web/80", Endpoints: []ir.Endpoint{{Address: "10.0.0.1", Port: 8080}, {Address: "", Port: 8080}}}
	cla, ok := loadAssignment(be).(*endpointv3.ClusterLoadAssignment)
	if !ok || len(cla.GetEndpoints()) != 1 {
		t.Fatalf("invalid load assignment encoded: %v", loadAssignment(be))
	}
	if cla.ValidateAll() == nil {
		t.Fatal("an endpoint without an address passed validation; the test needs another invalid case")
	}
}

// A virtual host keeps its routes encoded, and is on the wire exactly what
// the whole message is; Expand, given the route configuration holding it,
// gives the whole message back.
func TestVirtualHostsAreCompactAndEncodeTheSame(t *testing.T) {
	to := func(cluster string) ir.Action {
		return ir.Action{Forward: &ir.Forward{Clusters: []ir.WeightedCluster{{Cluster: cluster, Weight: 1}}}}
	}
	vh := &ir.VirtualHost{Host: "web.example.com", Routes: []*ir.Route{
		{Match: ir.Match{Path: "/api", PathType: ir.PathPrefix}, Action: to("default/api/80")},
		{Match: ir.Match{Path: "/", PathType: ir.PathPrefix}, Action: to("default/web/80")},
	}}
	compact, _, err := renderVirtualHost(vh, listenerSide{})
	if err != nil {
		t.Fatal(err)
	}
	if len(compact.GetRoutes()) != 0 || len(compact.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("routes held as fields: %v", compact)
	}
	if compact.GetName() != vh.Host || len(compact.GetDomains()) != 1 {
		t.Fatalf("name %q and domains %v, want %q", compact.GetName(), compact.GetDomains(), vh.Host)
	}
	whole := &routev3.VirtualHost{Name: vh.Host, Domains: []string{vh.Host}}
	for _, r := range vh.Routes {
		route, _, err := renderRoute(vh.Host, r, listenerSide{})
		if err != nil {
			t.Fatal(err)
		}
		whole.Routes = append(whole.Routes, route)
	}
	shareRouteSettings(whole) // as renderVirtualHost does, before it compacts
	encodesAs(t, compact, whole)
	rc, err := Expand(&routev3.RouteConfiguration{Name: "rc", VirtualHosts: []*routev3.VirtualHost{compact}})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(rc.VirtualHosts[0], whole) {
		t.Fatalf("expanded %v, want %v", rc.VirtualHosts[0], whole)
	}
}

// encodesAs checks that compact is on the wire exactly what whole is.
func encodesAs(t *testing.T, compact, whole proto.Message) {
	t.Helper()
	det := proto.MarshalOptions{Deterministic: true}
	got, err := det.Marshal(compact)
	if err != nil {
		t.Fatal(err)
	}
	want, err := det.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("compact encoding differs from the whole message's:\n%x\n%x", got, want)
	}
}

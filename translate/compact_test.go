package translate

import (
	"bytes"
	"testing"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// A load assignment keeps its endpoints encoded, and is on the wire exactly
// what the whole message is; Expand gives the whole message back.
func TestLoadAssignmentsAreCompactAndEncodeTheSame(t *testing.T) {
	be := &Backend{Name: "default/web/80", Endpoints: []Endpoint{{"10.0.0.1", 8080}, {"10.0.0.2", 8080}}}
	compact := loadAssignment(be)
	if len(compact.GetEndpoints()) != 0 || len(compact.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("endpoints held as fields: %v", compact)
	}
	if compact.GetClusterName() != be.Name {
		t.Fatalf("cluster name %q, want %q", compact.GetClusterName(), be.Name)
	}
	whole := &endpointv3.ClusterLoadAssignment{ClusterName: be.Name, Endpoints: []*endpointv3.LocalityLbEndpoints{{}}}
	for _, ep := range be.Endpoints {
		whole.Endpoints[0].LbEndpoints = append(whole.Endpoints[0].LbEndpoints, &endpointv3.LbEndpoint{
			HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(ep.Address, uint32(ep.Port))}},
		})
	}
	encodesAs(t, compact, whole)
	expanded, err := Expand(compact)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(expanded, whole) {
		t.Fatalf("expanded %v, want %v", expanded, whole)
	}
}

// An invalid load assignment stays whole, for validation to report it.
func TestInvalidLoadAssignmentStaysWhole(t *testing.T) {
	be := &Backend{Name: "default/web/80", Endpoints: []Endpoint{{"10.0.0.1", 8080}, {"", 8080}}}
	cla := loadAssignment(be)
	if len(cla.ProtoReflect().GetUnknown()) != 0 || len(cla.GetEndpoints()) != 1 {
		t.Fatalf("invalid load assignment compacted: %v", cla)
	}
	if cla.ValidateAll() == nil {
		t.Fatal("an endpoint without an address passed validation; the test needs another invalid case")
	}
}

// A virtual host keeps its routes encoded, and is on the wire exactly what
// the whole message is; Expand, given the route configuration holding it,
// gives the whole message back.
func TestVirtualHostsAreCompactAndEncodeTheSame(t *testing.T) {
	vh := &VirtualHost{Host: "web.example.com", Routes: []*Route{
		{Path: "/api", PathType: PathPrefix, Backend: "default/api/80"},
		{Path: "/", PathType: PathPrefix, Backend: "default/web/80"},
	}}
	compact := virtualHost(vh, false)
	if len(compact.GetRoutes()) != 0 || len(compact.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("routes held as fields: %v", compact)
	}
	if compact.GetName() != vh.Host || len(compact.GetDomains()) != 1 {
		t.Fatalf("name %q and domains %v, want %q", compact.GetName(), compact.GetDomains(), vh.Host)
	}
	whole := &routev3.VirtualHost{Name: vh.Host, Domains: []string{vh.Host}}
	for _, r := range vh.Routes {
		whole.Routes = append(whole.Routes, envoyRoute(vh.Host, r, false))
	}
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

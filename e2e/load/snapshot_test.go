package load

import (
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/e2e/adsclient"
)

func TestHostWatch(t *testing.T) {
	at := time.Now()
	snap := func(domains ...string) *adsclient.Snapshot {
		rc := &routev3.RouteConfiguration{Name: "any-name"}
		for _, d := range domains {
			rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{Name: d, Domains: []string{d}})
		}
		at = at.Add(time.Millisecond)
		return &adsclient.Snapshot{
			Routes:   map[string]*routev3.RouteConfiguration{rc.Name: rc},
			Received: map[string]time.Time{resource.RouteType: at},
		}
	}
	w := &hostWatch{hosts: []string{"a.test", "b.test"}}
	if w.ready(&adsclient.Snapshot{}) {
		t.Error("ready with no routes")
	}
	if w.ready(snap("a.test")) {
		t.Error("ready with one host of two")
	}
	if !w.ready(snap("b.test", "c.test", "a.test")) {
		t.Error("not ready with both hosts")
	}
}

func TestFindLoadAssignmentByAddress(t *testing.T) {
	cla := func(name string, addresses ...string) *endpointv3.ClusterLoadAssignment {
		l := &endpointv3.LocalityLbEndpoints{}
		for _, a := range addresses {
			l.LbEndpoints = append(l.LbEndpoints, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{
				Endpoint: &endpointv3.Endpoint{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
					SocketAddress: &corev3.SocketAddress{Address: a, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: 8080}},
				}}},
			}})
		}
		return &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{l}}
	}
	s := &adsclient.Snapshot{Endpoints: map[string]*endpointv3.ClusterLoadAssignment{
		"ns/svc-1/80":        cla("ns/svc-1/80", "10.0.0.1", "10.0.0.2"),
		"peer/svc-2/80/abcd": cla("peer/svc-2/80/abcd", "10.0.0.17", "10.0.0.18"),
	}}
	if got := findLoadAssignment(s, "10.0.0.18"); got != "peer/svc-2/80/abcd" {
		t.Errorf("10.0.0.18 found in %q", got)
	}
	if got := findLoadAssignment(s, "10.0.0.3"); got != "" {
		t.Errorf("10.0.0.3, held by none, found in %q", got)
	}
	if !holdsAddress(s, "ns/svc-1/80", "10.0.0.2") || holdsAddress(s, "ns/svc-1/80", "10.0.0.17") || holdsAddress(s, "missing", "10.0.0.1") {
		t.Error("holdsAddress answers wrongly")
	}
}

package envoy_test

import (
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestDeltaVirtualHostDiscoveryBothForms: for every golden IR, the render
// for delta Envoys alone (Options.DeltaVirtualHostDiscovery) is today's
// output whole, which SotW Envoys get, plus the VHDS form of its
// plain-HTTP route configurations (DeltaRoutes and VirtualHosts, as
// Options.VirtualHostDiscovery renders them), which delta Envoys get in
// their place; it publishes as a consistent, valid snapshot. With route
// scopes there is no VHDS form: scopes split the table for every Envoy.
func TestDeltaVirtualHostDiscoveryBothForms(t *testing.T) {
	for name, path := range goldenIRs(t) {
		t.Run(name, func(t *testing.T) {
			m := readIR(t, path)
			inline, split := renderWith(t, m, envoy.Options{}), renderWith(t, m, envoy.Options{VirtualHostDiscovery: true})
			both := renderWith(t, m, envoy.Options{DeltaVirtualHostDiscovery: true})
			sameList(t, "listeners", inline.Listeners, both.Listeners)
			sameList(t, "routes", inline.Routes, both.Routes)
			sameList(t, "clusters", inline.Clusters, both.Clusters)
			sameList(t, "endpoints", inline.Endpoints, both.Endpoints)
			sameList(t, "secrets", inline.Secrets, both.Secrets)
			var wantDelta []*routev3.RouteConfiguration
			for _, l := range m.Listeners {
				if l.Protocol != ir.HTTP {
					continue
				}
				for _, rc := range split.Routes {
					if rc.GetName() == l.Name {
						wantDelta = append(wantDelta, rc)
					}
				}
			}
			sameList(t, "delta route configurations", wantDelta, both.DeltaRoutes)
			sameList(t, "virtual hosts", split.VirtualHosts, both.VirtualHosts)
			if err := xds.Validate(both); err != nil {
				t.Errorf("invalid: %v", err)
			}
			if _, err := xds.NewSnapshot(both); err != nil {
				t.Errorf("not a consistent snapshot: %v", err)
			}
			scoped := renderWith(t, m, envoy.Options{DeltaVirtualHostDiscovery: true, RouteScopes: 4})
			if len(scoped.DeltaRoutes) != 0 || len(scoped.VirtualHosts) != 0 {
				t.Errorf("with route scopes: %d delta route configurations, %d virtual hosts over VHDS; want none", len(scoped.DeltaRoutes), len(scoped.VirtualHosts))
			}
		})
	}
}

// TestDeltaVirtualHostDiscoveryReusesUnchanged: a render after one host's
// routes changed hands out the same messages for every other host's
// virtual host and for the route configuration delta Envoys get, so that
// xDS sends a delta Envoy the changed virtual host alone.
func TestDeltaVirtualHostDiscoveryReusesUnchanged(t *testing.T) {
	m := readIR(t, goldenIRs(t)["wildcard"])
	r := envoy.NewRendererWith(envoy.Options{DeltaVirtualHostDiscovery: true})
	first, err := r.Render(m)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Render(withFirstRouteRenewed(m))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.VirtualHosts) != len(second.VirtualHosts) || len(first.VirtualHosts) < 2 {
		t.Fatalf("%d virtual hosts, then %d; want the same, several", len(first.VirtualHosts), len(second.VirtualHosts))
	}
	for i := range first.VirtualHosts {
		if same := first.VirtualHosts[i] == second.VirtualHosts[i]; same != (i != 0) {
			t.Errorf("virtual host %s: handed out again: %v, want %v", first.VirtualHosts[i].GetName(), same, i != 0)
		}
	}
	if len(first.DeltaRoutes) != 1 || first.DeltaRoutes[0] != second.DeltaRoutes[0] {
		t.Errorf("the delta route configuration was not handed out again: %v, then %v", first.DeltaRoutes, second.DeltaRoutes)
	}
}

// TestDeltaVirtualHostDiscoveryWithoutHosts: a plain-HTTP route
// configuration with no virtual host gives delta Envoys one over VHDS, of
// a reserved domain and without a route (Envoy takes an answer of none as
// no answer, and waited out its initial fetch to be ready: e2e
// TestDeltaEnvoyReadyWithoutHosts), handed out again while there is no
// host, and gone with the first host; as shipped (VHDS for delta Envoys
// alone) and with serve --vhds (for every Envoy).
func TestDeltaVirtualHostDiscoveryWithoutHosts(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        envoy.Options
		deltaRoutes int
	}{
		{"delta-vhds", envoy.Options{DeltaVirtualHostDiscovery: true}, 1},
		{"vhds", envoy.Options{VirtualHostDiscovery: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := readIR(t, goldenIRs(t)["wildcard"])
			empty := *m
			empty.VirtualHosts, empty.Clusters, empty.Backends, empty.Certificates = nil, nil, nil, nil
			r := envoy.NewRendererWith(tc.opts)
			var held []*routev3.VirtualHost
			for range 2 {
				out, err := r.Render(&empty)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := xds.NewSnapshot(out); err != nil {
					t.Fatalf("no host: %v", err)
				}
				if len(out.VirtualHosts) != 1 || len(out.DeltaRoutes) != tc.deltaRoutes {
					t.Fatalf("no host: %d virtual hosts, %d delta route configurations; want 1 and %d", len(out.VirtualHosts), len(out.DeltaRoutes), tc.deltaRoutes)
				}
				vh := out.VirtualHosts[0]
				if len(vh.GetRoutes()) != 0 || len(vh.GetDomains()) != 1 || vh.GetDomains()[0] != "no-host-yet.invalid" {
					t.Fatalf("no host: the virtual host sent is %v; want one of no-host-yet.invalid without a route", vh)
				}
				held = append(held, vh)
			}
			if held[0] != held[1] {
				t.Error("the virtual host of no host was not handed out again")
			}
			out, err := r.Render(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.VirtualHosts) == 0 {
				t.Fatal("with hosts, no virtual host is sent")
			}
			for _, vh := range out.VirtualHosts {
				if vh.GetDomains()[0] == "no-host-yet.invalid" {
					t.Fatalf("with hosts, the virtual host of no host is still sent")
				}
			}
		})
	}
}

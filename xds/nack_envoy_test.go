package xds

import (
	"fmt"
	"strings"
	"testing"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// A real Envoy rejects a version that passes our validation: one of two
// Envoys has a static listener on the port the new version moves the
// dynamic listener to, and Envoy refuses two listeners on one address. The
// other Envoy accepts it. The server must log and count the NACK, show it
// in CSDS, never send the rejected version again, keep serving both, and
// bring the rejecting Envoy back in sync with the next version.
func TestEnvoyNACK(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			ts := startServer(t)
			oldPort, newPort := freePort(t), freePort(t)
			f := fixture{listenerPort: oldPort, clusters: map[string][]string{"a": {backend(t, "a1")}}}
			ts.publish(t, f)
			good := startEnvoy(t, ts.addr, "accepts-"+protocol, delta, nil)
			bad := startEnvoy(t, ts.addr, "rejects-"+protocol, delta, func(b *bootstrapv3.Bootstrap) {
				b.StaticResources.Listeners = append(b.StaticResources.Listeners, staticListener(t, newPort))
			})
			waitSynced(t, ts, good.nodeID)
			waitSynced(t, ts, bad.nodeID)
			expectBackend(t, oldPort, "/a", "a1")
			pushes := ts.counter(t, "pushes", "listener", protocol)

			f.listenerPort = newPort
			ts.publish(t, f)
			rejected := ts.Snapshot().GetVersion(resource.ListenerType)
			waitSynced(t, ts, good.nodeID)
			eventually(t, "the NACK is counted", func() error {
				if n := ts.counter(t, "nacks", "listener", protocol); n != 1 {
					return fmt.Errorf("nacks_total = %v", n)
				}
				return nil
			})
			logged := ts.logs.lines("NACK", "node="+bad.nodeID, "version="+rejected)
			if len(logged) != 1 || !strings.Contains(logged[0], "error=") {
				t.Errorf("want one NACK log line with the node, version and error; got %q", logged)
			}
			t.Logf("NACK as logged: %s", logged)
			detail := nackDetail(t, ts, bad.nodeID, rejected)
			if detail == "" {
				t.Error("CSDS shows no NACK for the rejecting Envoy")
			}
			// The rejecting Envoy keeps what it had and goes on serving it.
			expectBackend(t, oldPort, "/a", "a1")
			if n := bad.stat("listener_manager.lds.update_rejected"); n != 1 {
				t.Errorf("envoy %s rejected %d listener updates, want 1", bad.nodeID, n)
			}

			// The next version is one both accept.
			f.listenerPort = oldPort
			f.clusters["a"] = []string{backend(t, "a2")}
			ts.publish(t, f)
			waitSynced(t, ts, good.nodeID)
			waitSynced(t, ts, bad.nodeID)
			expectBackend(t, oldPort, "/a", "a2")

			// Two versions went to two Envoys: four listener responses. A
			// resend loop would have sent more, and drawn more NACKs.
			if got := ts.counter(t, "pushes", "listener", protocol) - pushes; got != 4 {
				t.Errorf("%v listener responses sent for two versions to two Envoys, want 4", got)
			}
			if n := ts.counter(t, "nacks", "listener", protocol); n != 1 {
				t.Errorf("nacks_total = %v, want 1", n)
			}
			if n := bad.stat("listener_manager.lds.update_rejected"); n != 1 {
				t.Errorf("envoy %s rejected %d listener updates, want 1", bad.nodeID, n)
			}
		})
	}
}

// nackDetail returns the error CSDS reports for the node's listeners at the
// rejected version, or "".
func nackDetail(t *testing.T, ts *testServer, nodeID, rejected string) string {
	t.Helper()
	resp, err := ts.clientStatus(&statusservice.ClientStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range resp.GetConfig() {
		if cfg.GetNode().GetId() != nodeID {
			continue
		}
		for _, g := range cfg.GetGenericXdsConfigs() {
			if g.GetTypeUrl() == resource.ListenerType && g.GetClientStatus() == adminv3.ClientResourceStatus_NACKED &&
				g.GetErrorState().GetVersionInfo() == rejected {
				return g.GetErrorState().GetDetails()
			}
		}
	}
	return ""
}

// staticListener answers every request itself; all that matters is the
// address it holds.
func staticListener(t testing.TB, port int) *listenerv3.Listener {
	t.Helper()
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		t.Fatal(err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: "static",
		RouteSpecifier: &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: &routev3.RouteConfiguration{
			VirtualHosts: []*routev3.VirtualHost{{Name: "static", Domains: []string{"*"}, Routes: []*routev3.Route{{
				Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
				Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 200}},
			}}}},
		}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &listenerv3.Listener{
		Name:    "static",
		Address: socketAddress("127.0.0.1", uint32(port)),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
		}}}},
	}
}

// Every Envoy rejects a route configuration with a regex RE2 cannot compile
// (protoc-gen-validate only checks that it is not empty). Both protocols at
// once: each Envoy NACKs once, keeps routing with what it had, is not sent
// the rejected routes again, and takes the next version.
func TestEnvoyNACKOfRoutesByEveryEnvoy(t *testing.T) {
	toolPath(t, "envoy")
	ts := startServer(t)
	port := freePort(t)
	f := fixture{listenerPort: port, clusters: map[string][]string{"a": {backend(t, "a1")}}}
	ts.publish(t, f)
	envoys := map[string]*envoy{
		protocolSotW:  startEnvoy(t, ts.addr, "regex-sotw", false, nil),
		protocolDelta: startEnvoy(t, ts.addr, "regex-delta", true, nil),
	}
	pushes := map[string]float64{}
	for protocol, e := range envoys {
		waitSynced(t, ts, e.nodeID)
		pushes[protocol] = ts.counter(t, "pushes", "route", protocol)
	}
	expectBackend(t, port, "/a", "a1")

	f.badRegex = true
	ts.publish(t, f)
	rejected := ts.Snapshot().GetVersion(resource.RouteType)
	for protocol, e := range envoys {
		eventually(t, e.nodeID+" NACKs the routes", func() error {
			if n := ts.counter(t, "nacks", "route", protocol); n != 1 {
				return fmt.Errorf("nacks_total{type=route,protocol=%s} = %v", protocol, n)
			}
			return nil
		})
		resp, err := ts.clientStatus(&statusservice.ClientStatusRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var detail string
		for _, cfg := range resp.GetConfig() {
			for _, g := range cfg.GetGenericXdsConfigs() {
				if cfg.GetNode().GetId() == e.nodeID && g.GetTypeUrl() == resource.RouteType &&
					g.GetClientStatus() == adminv3.ClientResourceStatus_NACKED && g.GetErrorState().GetVersionInfo() == rejected {
					detail = g.GetErrorState().GetDetails()
				}
			}
		}
		// RE2's own words for "/broken([".
		if !strings.Contains(detail, "missing ]") {
			t.Errorf("%s: CSDS error for the routes = %q, want RE2's error", e.nodeID, detail)
		}
	}
	expectBackend(t, port, "/a", "a1") // still routing with the previous routes

	f.badRegex = false
	f.clusters["a"] = []string{backend(t, "a2")}
	f.clusters["b"] = []string{backend(t, "b1")} // a new route: RDS must change
	ts.publish(t, f)
	for protocol, e := range envoys {
		waitSynced(t, ts, e.nodeID)
		if got := ts.counter(t, "pushes", "route", protocol) - pushes[protocol]; got != 2 {
			t.Errorf("%s: %v route responses for two versions, want 2", protocol, got)
		}
		if n := ts.counter(t, "nacks", "route", protocol); n != 1 {
			t.Errorf("%s: nacks_total{type=route} = %v, want 1", protocol, n)
		}
		if n := e.stat("http.http.rds.http.update_rejected"); n != 1 {
			t.Errorf("envoy %s rejected %d route updates, want 1", e.nodeID, n)
		}
	}
	expectBackend(t, port, "/b", "b1")
}

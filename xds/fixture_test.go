package xds

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/translate"
)

// fixture describes a small configuration: one HTTP listener whose routes
// send /<cluster> to each cluster, each cluster with its endpoints. Tests
// build it by hand rather than through translate, so that they exercise the
// xDS layer alone and do not change when translation does.
type fixture struct {
	listenerPort int
	clusters     map[string][]string // cluster name -> "127.0.0.1:port" endpoints
	// badRegex adds a route whose regex passes protoc-gen-validate but that
	// Envoy's RE2 cannot compile: Envoy NACKs the route configuration.
	badRegex bool
	// padHosts adds that many virtual hosts answering directly, to make
	// the route configuration large (codec.go sends large encodings as
	// they are).
	padHosts int
}

const fixtureRoute = "http"

// published is a quiet server that has published f.
func (f fixture) published(t testing.TB) *Server {
	t.Helper()
	s := quietServer()
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	return s
}

func (f fixture) resources(t testing.TB) *translate.Resources {
	t.Helper()
	r := &translate.Resources{}
	r.Listeners = append(r.Listeners, httpListener(t, "http", f.listenerPort))
	vh := &routev3.VirtualHost{Name: "all", Domains: []string{"*"}}
	for _, name := range sortedKeys(f.clusters) {
		vh.Routes = append(vh.Routes, &routev3.Route{
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/" + name}},
			Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: name}}},
		})
		r.Clusters = append(r.Clusters, edsCluster(name))
		r.Endpoints = append(r.Endpoints, loadAssignment(t, name, f.clusters[name]))
	}
	if f.badRegex {
		vh.Routes = append(vh.Routes, &routev3.Route{
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "/broken(["}}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 418}},
		})
	}
	vhosts := []*routev3.VirtualHost{vh}
	for i := range f.padHosts {
		host := fmt.Sprintf("pad-%d.example.com", i)
		vhosts = append(vhosts, &routev3.VirtualHost{Name: host, Domains: []string{host}, Routes: []*routev3.Route{{
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 204}},
		}}})
	}
	r.Routes = append(r.Routes, &routev3.RouteConfiguration{Name: fixtureRoute, VirtualHosts: vhosts})
	return r
}

func httpListener(t testing.TB, name string, port int) *listenerv3.Listener {
	t.Helper()
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		t.Fatal(err)
	}
	hcm, err := anypb.New(&hcmv3.HttpConnectionManager{
		StatPrefix: name,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			RouteConfigName: fixtureRoute,
			ConfigSource:    adsSource(),
		}},
		HttpFilters: []*hcmv3.HttpFilter{{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &listenerv3.Listener{
		Name:    name,
		Address: socketAddress("127.0.0.1", uint32(port)),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name: "envoy.filters.network.http_connection_manager", ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcm},
		}}}},
	}
}

func edsCluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()},
		ConnectTimeout:       durationpb.New(time.Second),
	}
}

func loadAssignment(t testing.TB, cluster string, endpoints []string) *endpointv3.ClusterLoadAssignment {
	t.Helper()
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: cluster}
	var lb []*endpointv3.LbEndpoint
	for _, ep := range endpoints {
		host, portStr, err := net.SplitHostPort(ep)
		if err != nil {
			t.Fatal(err)
		}
		port, err := strconv.Atoi(portStr)
		if err != nil {
			t.Fatal(err)
		}
		lb = append(lb, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: socketAddress(host, uint32(port)),
		}}})
	}
	cla.Endpoints = []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lb}}
	return cla
}

func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// freePort returns a port reserved for the test until it ends, which no
// test of another package running beside it is handed (framework.FreePort):
// for Envoy's admin and listeners, which Envoy binds itself.
func freePort(t testing.TB) int {
	t.Helper()
	return framework.FreePort(t)
}

func localAddr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

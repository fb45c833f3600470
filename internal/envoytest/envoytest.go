// Package envoytest makes the real Envoy the judge of rendered resources,
// for tests: each set is turned into a static configuration (RDS inlined,
// EDS clusters made STATIC, SDS secrets made static) and checked with
// `envoy --mode validate`, which runs Envoy's own config checks, far beyond
// go-control-plane's field validation.
package envoytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// Validate fails t unless the real Envoy accepts the resources.
func Validate(t testing.TB, bin string, res *envoy.Resources) {
	t.Helper()
	cfg, err := staticBootstrap(res)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "envoy.json")
	raw, err := protojson.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--mode", "validate", "-c", path, "-l", "error").CombinedOutput()
	if err != nil {
		t.Fatalf("envoy rejects the configuration: %v\n%s", err, out)
	}
}

// Binary finds the Envoy that `make tools` installs.
func Binary(t testing.TB) string {
	t.Helper()
	tools := os.Getenv("INGRESS_XDS_TOOLS")
	if tools == "" {
		_, file, _, _ := runtime.Caller(0)
		tools = filepath.Join(filepath.Dir(file), "..", "..", ".tools")
	}
	bin := filepath.Join(tools, "bin", "envoy")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Envoy at %s: run `make tools` (or go test -short to skip): %v", bin, err)
	}
	return bin
}

// staticBootstrap turns dynamic resources into an equivalent static config.
func staticBootstrap(r *envoy.Resources) (*bootstrapv3.Bootstrap, error) {
	routes := map[string]*routev3.RouteConfiguration{}
	for _, rc := range r.Routes {
		routes[rc.Name] = rc
	}
	cfg := &bootstrapv3.Bootstrap{
		Node:            &corev3.Node{Id: "validate", Cluster: "validate"},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{},
	}
	for _, l := range r.Listeners {
		l = proto.Clone(l).(*listenerv3.Listener)
		for _, fc := range l.FilterChains {
			for _, f := range fc.Filters {
				hcm := &hcmv3.HttpConnectionManager{}
				if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
					continue
				}
				if rds := hcm.GetRds(); rds != nil {
					hcm.RouteSpecifier = &hcmv3.HttpConnectionManager_RouteConfig{RouteConfig: routes[rds.RouteConfigName]}
				}
				// Route scopes (translate/envoy/scopes.go): the scopes listed
				// in the listener, each with its route configuration.
				if sr := hcm.GetScopedRoutes(); sr.GetScopedRds() != nil {
					list := &hcmv3.ScopedRouteConfigurationsList{}
					for _, scope := range r.ScopedRoutes {
						scope = proto.Clone(scope).(*routev3.ScopedRouteConfiguration)
						scope.RouteConfiguration = routes[scope.RouteConfigurationName]
						scope.RouteConfigurationName = ""
						list.ScopedRouteConfigurations = append(list.ScopedRouteConfigurations, scope)
					}
					sr.ConfigSpecifier = &hcmv3.ScopedRoutes_ScopedRouteConfigurationsList{ScopedRouteConfigurationsList: list}
				}
				packed, err := anypb.New(hcm)
				if err != nil {
					return nil, err
				}
				f.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: packed}
			}
			if ts := fc.GetTransportSocket(); ts != nil {
				dtc := &tlsv3.DownstreamTlsContext{}
				if err := ts.GetTypedConfig().UnmarshalTo(dtc); err == nil {
					for _, sds := range dtc.GetCommonTlsContext().GetTlsCertificateSdsSecretConfigs() {
						sds.SdsConfig = nil // refer to the static secret of that name
					}
					packed, err := anypb.New(dtc)
					if err != nil {
						return nil, err
					}
					ts.ConfigType = &corev3.TransportSocket_TypedConfig{TypedConfig: packed}
				}
			}
		}
		cfg.StaticResources.Listeners = append(cfg.StaticResources.Listeners, l)
	}
	cla := map[string]*endpointv3.ClusterLoadAssignment{}
	for _, e := range r.Endpoints {
		// Load assignments are kept encoded: cloned, they are messages.
		cla[e.GetClusterName()] = proto.Clone(e).(*endpointv3.ClusterLoadAssignment)
	}
	for _, rc := range r.Clusters {
		c := proto.Clone(rc).(*clusterv3.Cluster)
		if c.GetType() == clusterv3.Cluster_EDS {
			name := c.GetEdsClusterConfig().GetServiceName()
			if name == "" {
				name = c.GetName() // what Envoy asks EDS for
			}
			c.EdsClusterConfig = nil
			c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC}
			c.LoadAssignment = cla[name]
		}
		cfg.StaticResources.Clusters = append(cfg.StaticResources.Clusters, c)
	}
	cfg.StaticResources.Secrets = append(cfg.StaticResources.Secrets, r.Secrets...)
	return cfg, nil
}

package xds

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// XDSClusterName is the static cluster in the bootstrap that points at us.
const XDSClusterName = "ingress_xds"

// BootstrapOptions describe how an Envoy reaches the control plane.
type BootstrapOptions struct {
	XDSAddress   string // host:port of the xDS server
	NodeID       string
	NodeCluster  string // defaults to "ingress-xds"
	AdminAddress string // host:port of Envoy's admin interface
	Delta        bool   // use incremental (delta) ADS
	// TLS, when set, connects over mutual TLS with these files (paths on
	// Envoy's filesystem): Envoy's client certificate and key, and the CA
	// of the server's certificate. Nil connects in plaintext.
	TLS *TLSFiles
	// ServerName is the name the server's certificate must be valid for,
	// sent as SNI unless it is an IP address; the host of XDSAddress when
	// empty. Only used with TLS.
	ServerName string
	// Stats is which of Envoy's statistics to keep: StatsOperators (the
	// default, when empty) or StatsAll (bootstrap_stats.go).
	Stats string
	// MaxHeapBytes, when above zero, is the heap Envoy may use: the
	// overload manager sheds load as it nears it (bootstrap_overload.go).
	MaxHeapBytes uint64
}

// Bootstrap builds an Envoy bootstrap that takes listeners and clusters (and
// through them routes, endpoints and secrets) from our ADS server.
func Bootstrap(o BootstrapOptions) (*bootstrapv3.Bootstrap, error) {
	xdsHost, xdsPort, err := splitHostPort(o.XDSAddress)
	if err != nil {
		return nil, fmt.Errorf("--xds-address: %w", err)
	}
	adminHost, adminPort, err := splitHostPort(o.AdminAddress)
	if err != nil {
		return nil, fmt.Errorf("--admin-address: %w", err)
	}
	if o.NodeID == "" {
		return nil, fmt.Errorf("node id is empty")
	}
	nodeCluster := o.NodeCluster
	if nodeCluster == "" {
		nodeCluster = "ingress-xds"
	}
	apiType := corev3.ApiConfigSource_GRPC
	if o.Delta {
		apiType = corev3.ApiConfigSource_DELTA_GRPC
	}
	// The xDS stream is gRPC: HTTP/2 to the control plane, with keepalives
	// so that a dead control plane is noticed and another replica tried.
	protocolOptions, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{
				ConnectionKeepalive: &corev3.KeepaliveSettings{
					Interval: durationpb.New(30 * time.Second),
					Timeout:  durationpb.New(5 * time.Second),
				},
			}},
		}},
	})
	if err != nil {
		return nil, err
	}
	discovery := clusterv3.Cluster_STRICT_DNS
	if _, err := netip.ParseAddr(xdsHost); err == nil {
		discovery = clusterv3.Cluster_STATIC
	}
	// No initial fetch timeout: Envoy waits for its first listeners and
	// clusters however long the control plane takes. With Envoy's default
	// (15 s for CDS, then 15 s for LDS) an Envoy that cannot reach the
	// control plane turns LIVE with no listener after 30 s, and its
	// readiness probe (/ready) lets it into Services and Ingress status
	// while it refuses every connection: the kind suite saw exactly that.
	ads := &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		InitialFetchTimeout:   durationpb.New(0),
	}
	xdsCluster := &clusterv3.Cluster{
		Name:                          XDSClusterName,
		ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: discovery},
		ConnectTimeout:                durationpb.New(1 * time.Second),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": protocolOptions},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: XDSClusterName,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
						Address: socketAddress(xdsHost, xdsPort),
					}},
				}},
			}},
		},
	}
	if o.TLS != nil {
		serverName := o.ServerName
		if serverName == "" {
			serverName = xdsHost
		}
		if err := withMutualTLS(xdsCluster, *o.TLS, serverName); err != nil {
			return nil, err
		}
	}
	b := &bootstrapv3.Bootstrap{
		Node: &corev3.Node{Id: o.NodeID, Cluster: nodeCluster},
		Admin: &bootstrapv3.Admin{
			Address: socketAddress(adminHost, adminPort),
		},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &corev3.ApiConfigSource{
				ApiType:             apiType,
				TransportApiVersion: corev3.ApiVersion_V3,
				GrpcServices: []*corev3.GrpcService{{
					TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSClusterName}},
				}},
				SetNodeOnFirstMessageOnly: true,
			},
			LdsConfig: ads,
			CdsConfig: ads,
		},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{
			Clusters: []*clusterv3.Cluster{xdsCluster},
		},
	}
	// A worker thread builds its copy of a cluster (load balancer, host
	// sets) when a request first needs it, not when CDS adds it: each
	// worker otherwise holds a copy of every cluster, times the node's
	// cores in a DaemonSet that does not set --concurrency. The first
	// request to a cluster pays for the copy (docs/benchmarks.md, "Where
	// Envoy's memory goes" and "The levers of the bootstrap").
	b.ClusterManager = &bootstrapv3.ClusterManager{EnableDeferredClusterCreation: true}
	if err := applyStats(b, o.Stats); err != nil {
		return nil, err
	}
	if o.MaxHeapBytes > 0 {
		if b.OverloadManager, err = overloadManager(o.MaxHeapBytes); err != nil {
			return nil, fmt.Errorf("the overload manager: %w", err)
		}
	}
	return b, nil
}

func splitHostPort(hostport string) (string, uint32, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, err
	}
	if host == "" {
		return "", 0, fmt.Errorf("%q has no host", hostport)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("%q: invalid port", hostport)
	}
	return host, uint32(port), nil
}

func socketAddress(host string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       host,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

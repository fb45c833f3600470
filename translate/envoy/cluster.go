package envoy

import (
	"fmt"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// renderCluster renders a cluster of a backend. A default EDS cluster is
// kept as its name (EDSCluster). A cluster with a policy asks EDS for its
// backend's load assignment by name (service_name), which it shares with
// every other cluster of that backend.
func renderCluster(c *ir.Cluster, be *ir.Backend, parts *clusterParts) (Cluster, error) {
	if len(c.Aggregate) > 0 {
		return aggregateCluster(c)
	}
	if be.ExternalName == "" && c.Policy == nil {
		return &EDSCluster{name: c.Name, parts: parts}, nil
	}
	var out *clusterv3.Cluster
	switch {
	case be.ExternalName != "":
		out = dnsCluster(c.Name, be)
	case c.Policy.ServiceAddress != "":
		out = staticCluster(c.Name, c.Policy.ServiceAddress, uint32(be.Port))
	default:
		out = edsCluster(c.Name, parts)
		out.EdsClusterConfig = &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource(), ServiceName: be.Name}
	}
	if err := applyClusterPolicy(out, c.Policy); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if err := applyUpstreamPool(out, parts.pool, parts.poolOptions); err != nil { // upstream_pool.go
		return nil, err
	}
	return out, nil
}

// dnsCluster serves an ExternalName Service: Envoy resolves the name and
// sends the upstream's own name as Host, as a client of that name would.
func dnsCluster(name string, be *ir.Backend) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS},
		ConnectTimeout:       durationpb.New(defaultConnectTimeout),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
		DnsLookupFamily:      clusterv3.Cluster_V4_PREFERRED,
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
						Address:  socketAddress(be.ExternalName, uint32(be.Port)),
						Hostname: be.ExternalName,
					}},
				}},
			}},
		},
	}
}

// applyClusterPolicy sets what a cluster policy changes.
func applyClusterPolicy(c *clusterv3.Cluster, p *ir.ClusterPolicy) error {
	if p == nil {
		return nil
	}
	if p.ConnectTimeout > 0 {
		c.ConnectTimeout = durationpb.New(time.Duration(p.ConnectTimeout))
	}
	switch p.LoadBalancer {
	case ir.LeastRequest:
		c.LbPolicy = clusterv3.Cluster_LEAST_REQUEST
	case ir.Random:
		c.LbPolicy = clusterv3.Cluster_RANDOM
	case ir.RingHash:
		c.LbPolicy = clusterv3.Cluster_RING_HASH
	}
	if cb := p.CircuitBreakers; cb != nil {
		c.CircuitBreakers = &clusterv3.CircuitBreakers{Thresholds: []*clusterv3.CircuitBreakers_Thresholds{{
			MaxConnections:     optionalUInt32(cb.MaxConnections),
			MaxPendingRequests: optionalUInt32(cb.MaxPendingRequests),
			MaxRequests:        optionalUInt32(cb.MaxRequests),
			MaxRetries:         optionalUInt32(cb.MaxRetries),
		}}}
	}
	if p.Protocol == ir.UpstreamHTTP2 {
		opts, err := anypb.New(&httpv3.HttpProtocolOptions{
			UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
			}},
		})
		if err != nil {
			return fmt.Errorf("packing protocol options: %w", err)
		}
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}
	}
	if p.Mirror {
		if err := mirrorUpstream(c); err != nil { // mirror.go
			return err
		}
	}
	if t := p.TLS; t != nil {
		socket, err := upstreamTLS(t, p.Protocol)
		if err != nil {
			return err
		}
		c.TransportSocket = socket
	}
	return nil
}

// staticCluster sends to one address (service-upstream: a Service's
// cluster IP), which kube-proxy balances.
func staticCluster(name, address string, port uint32) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(defaultConnectTimeout),
		LbPolicy:             clusterv3.Cluster_ROUND_ROBIN,
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{
					HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{Address: socketAddress(address, port)}},
				}},
			}},
		},
	}
}

func optionalUInt32(v uint32) *wrapperspb.UInt32Value {
	if v == 0 {
		return nil
	}
	return wrapperspb.UInt32(v)
}

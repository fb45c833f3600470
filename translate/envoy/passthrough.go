package envoy

import (
	"fmt"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	directresponsev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/direct_response/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// passthroughChain hands a host's TLS connections, chosen by the SNI the
// listener's TLS inspector read, to its backend as they are (ssl-passthrough):
// no TLS here, no HTTP, the backend's own certificate reaches the client.
//
// A rejecting passthrough (ir.Passthrough.Reject) closes the connection as
// it comes instead: a direct response of nothing, so that the client's
// handshake ends, where falling through to the default chain would answer
// it with another name's certificate.
//
// A terminating one (ir.Passthrough.Terminate) ends the TLS with the
// host's certificate first, offering no ALPN protocol (what runs inside
// is not HTTP here), and sends the backend what the client sends in it.
func passthroughChain(l *ir.Listener, vh *ir.VirtualHost) (*listenerv3.FilterChain, error) {
	name := "envoy.filters.network.tcp_proxy"
	var filter *anypb.Any
	var err error
	if vh.Passthrough.Reject {
		name = "envoy.filters.network.direct_response"
		filter, err = anypb.New(&directresponsev3.Config{})
	} else {
		filter, err = anypb.New(tcpProxy(l.Name+"_passthrough", vh.Passthrough))
	}
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", name, err)
	}
	chain := &listenerv3.FilterChain{
		Name:             vh.Host,
		FilterChainMatch: &listenerv3.FilterChainMatch{ServerNames: append([]string{vh.Host}, vh.Aliases...)},
		Filters: []*listenerv3.Filter{{
			Name:       name,
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: filter},
		}},
	}
	if vh.Passthrough.Terminate {
		if chain.TransportSocket, err = terminatedTLS(vh.Certificate, l); err != nil {
			return nil, err
		}
	}
	return chain, nil
}

// tcpProxy sends a passthrough's connections to its cluster, or each to
// one of its split's, by weight.
func tcpProxy(statPrefix string, p *ir.Passthrough) *tcpproxyv3.TcpProxy {
	proxy := &tcpproxyv3.TcpProxy{StatPrefix: statPrefix}
	if len(p.Split) == 0 {
		proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_Cluster{Cluster: p.Cluster}
		return proxy
	}
	weighted := &tcpproxyv3.TcpProxy_WeightedCluster{}
	for _, s := range p.Split {
		weighted.Clusters = append(weighted.Clusters, &tcpproxyv3.TcpProxy_WeightedCluster_ClusterWeight{Name: s.Cluster, Weight: s.Weight})
	}
	proxy.ClusterSpecifier = &tcpproxyv3.TcpProxy_WeightedClusters{WeightedClusters: weighted}
	return proxy
}

package envoy

import (
	"fmt"
	"net/netip"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	proxyprotocolv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/proxy_protocol/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The PROXY protocol (ingress-nginx's use-proxy-protocol, ir.Downstream's
// ProxyProtocol). Envoy's listener filter reads the header before anything
// else, TLS included, and makes its addresses the connection's: the
// client's address for X-Forwarded-For, X-Real-IP, RBAC and the access
// log, and the address the client reached, whose port the backend's
// X-Forwarded-Port names (nginx's $proxy_protocol_server_port).
//
// lua_ingress.lua also takes the scheme from that port: a connection to
// 443 on the plain listener is a client's HTTPS, ended by the load
// balancer in front. The plain listener then has two filter chains, told
// apart by the destination port, whose connection managers set :scheme and
// X-Forwarded-Proto to https and, where the client's X-Forwarded-Proto is
// not trusted, to http; its route configuration passes X-Forwarded-Proto
// on and redirects to HTTPS only where it says http (listenerSide's
// forwardedProto), as lua_ingress.lua lets the port win over a trusted
// proxy's header.

// httpsPort is the port a PROXY header names for a client's HTTPS.
const httpsPort = 443

// proxyProtocolFilter is the listener filter reading the header, first of
// a listener's filters.
func proxyProtocolFilter() (*listenerv3.ListenerFilter, error) {
	cfg, err := anypb.New(&proxyprotocolv3.ProxyProtocol{})
	if err != nil {
		return nil, fmt.Errorf("packing the PROXY protocol filter: %w", err)
	}
	return &listenerv3.ListenerFilter{
		Name:       "envoy.filters.listener.proxy_protocol",
		ConfigType: &listenerv3.ListenerFilter_TypedConfig{TypedConfig: cfg},
	}, nil
}

// applyProxyProtocol gives listener lis, rendered from l, the PROXY
// protocol when l's Downstream asks for it: the filter first, and, with
// ProxyProtocolFrom, every filter chain (the default one made a chain)
// matching only connections from those peers, so that another peer's
// connection matches none and is closed. The chains are cloned, not
// changed: the renderer keeps them between builds.
func applyProxyProtocol(lis *listenerv3.Listener, l *ir.Listener) error {
	d := l.Downstream
	if d == nil || !d.ProxyProtocol {
		return nil
	}
	filter, err := proxyProtocolFilter()
	if err != nil {
		return err
	}
	lis.ListenerFilters = append([]*listenerv3.ListenerFilter{filter}, lis.ListenerFilters...)
	if d.ProxyProtocolTimeout > 0 {
		lis.ListenerFiltersTimeout = durationpb.New(time.Duration(d.ProxyProtocolTimeout))
	}
	if d.ProxyProtocolFrom == "" {
		return nil
	}
	var peers []*corev3.CidrRange
	for _, c := range strings.Split(d.ProxyProtocolFrom, ",") {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return fmt.Errorf("listener %s: PROXY protocol peer CIDR %q: %w", l.Name, c, err)
		}
		peers = append(peers, &corev3.CidrRange{AddressPrefix: p.Addr().String(), PrefixLen: wrapperspb.UInt32(uint32(p.Bits()))})
	}
	chains := make([]*listenerv3.FilterChain, 0, len(lis.FilterChains)+1)
	for _, fc := range lis.FilterChains {
		chains = append(chains, proto.Clone(fc).(*listenerv3.FilterChain))
	}
	if lis.DefaultFilterChain != nil {
		chains = append(chains, proto.Clone(lis.DefaultFilterChain).(*listenerv3.FilterChain))
		lis.DefaultFilterChain = nil
	}
	for _, fc := range chains {
		if fc.FilterChainMatch == nil {
			fc.FilterChainMatch = &listenerv3.FilterChainMatch{}
		}
		fc.FilterChainMatch.DirectSourcePrefixRanges = peers
	}
	lis.FilterChains = chains
	return nil
}

// proxiedHTTPSChain is, for a plain listener of the PROXY protocol whose
// connection manager is hcm, the filter chain of the connections that
// reached port 443: hcm with :scheme and X-Forwarded-Proto https (the
// connection manager sets both, over what the client or a proxy sent).
// Where the client's X-Forwarded-Proto is not trusted, hcm itself gets
// http, which an HTTP/2 client's :scheme must not change either.
func proxiedHTTPSChain(hcm *hcmv3.HttpConnectionManager, d *ir.Downstream) (*listenerv3.FilterChain, error) {
	https := proto.Clone(hcm).(*hcmv3.HttpConnectionManager)
	https.SchemeHeaderTransformation = &corev3.SchemeHeaderTransformation{
		Transformation: &corev3.SchemeHeaderTransformation_SchemeToOverwrite{SchemeToOverwrite: "https"},
	}
	if d.ProxyHeaders != ir.ProxyHeadersTrusted {
		hcm.SchemeHeaderTransformation = &corev3.SchemeHeaderTransformation{
			Transformation: &corev3.SchemeHeaderTransformation_SchemeToOverwrite{SchemeToOverwrite: "http"},
		}
	}
	filter, err := packConnectionManager(https)
	if err != nil {
		return nil, err
	}
	return &listenerv3.FilterChain{
		Name:             "proxied-https",
		FilterChainMatch: &listenerv3.FilterChainMatch{DestinationPort: wrapperspb.UInt32(httpsPort)},
		Filters:          []*listenerv3.Filter{filter},
	}, nil
}

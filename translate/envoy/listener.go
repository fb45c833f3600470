package envoy

import (
	"net/netip"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// adsSource says "get it over the same ADS stream".
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ResourceApiVersion:    corev3.ApiVersion_V3,
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	}
}

func socketAddress(address string, port uint32) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       address,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
	}}}
}

// listenerAddress is where a listener binds: on ::, IPv4 clients too
// (Envoy's ipv4_compat), whose addresses Envoy then reports as IPv4, not
// as IPv4-mapped IPv6.
func listenerAddress(l *ir.Listener) *corev3.Address {
	a := socketAddress(l.Address, l.Port)
	if ip, err := netip.ParseAddr(l.Address); err == nil && ip == netip.IPv6Unspecified() {
		a.GetSocketAddress().Ipv4Compat = true
	}
	return a
}

// httpListener renders a plain-HTTP listener: every virtual host, through
// the route configuration named as the listener is, or through its scopes'
// (scopes.go) when scopes is above 0.
func httpListener(l *ir.Listener, uses filterSet, gz gzipSet, scopes int) (*listenerv3.Listener, error) {
	hcm, err := connectionManager(l, l.Name, uses, gz, scopes)
	if err != nil {
		return nil, err
	}
	var chains []*listenerv3.FilterChain
	if l.Downstream != nil && l.Downstream.ProxyProtocol {
		// proxyprotocol.go: a client's HTTPS ended in front.
		https, err := proxiedHTTPSChain(hcm, l.Downstream)
		if err != nil {
			return nil, err
		}
		chains = append(chains, https)
	}
	filter, err := packConnectionManager(hcm)
	if err != nil {
		return nil, err
	}
	lis := &listenerv3.Listener{
		Name:         l.Name,
		Address:      listenerAddress(l),
		FilterChains: append(chains, &listenerv3.FilterChain{Filters: []*listenerv3.Filter{filter}}),
	}
	if err := applyProxyProtocol(lis, l); err != nil {
		return nil, err
	}
	return lis, nil
}

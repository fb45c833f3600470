package envoy

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Virtual host discovery (VHDS): with Options.VirtualHostDiscovery, the
// plain-HTTP route configuration holds no virtual host and says that its
// virtual hosts come over VHDS; each is a resource of its own
// (Resources.VirtualHosts), so that one Ingress change sends Envoy the one
// virtual host it touched rather than a route configuration of every host.
// The virtual hosts are the same messages but for their names, so routing
// is the same: Envoy matches domains across the virtual hosts it got over
// VHDS as across those of one route configuration.
//
// Envoy asks for VHDS over delta xDS only: a control plane rendering this
// form serves Envoys bootstrapped with delta ADS (bootstrap --delta).
// Envoy subscribes to the route configuration's name as a namespace
// ("http") and expects every virtual host named "http/<anything>"; the
// xDS cache answers that subscription (xds/vhds.go).

// VirtualHostResourceName is the VHDS resource name of a host's virtual
// host in the route configuration routeConfig. Envoy keeps and removes a
// discovered virtual host by its name, so the virtual host is named so too.
func VirtualHostResourceName(routeConfig, host string) string {
	return routeConfig + "/" + host
}

// discoverVirtualHosts takes the virtual hosts out of a route
// configuration it has just made (not yet handed out), says they come over
// VHDS on the same ADS stream, and returns them.
func discoverVirtualHosts(rc *routev3.RouteConfiguration) []*routev3.VirtualHost {
	vhosts := rc.VirtualHosts
	rc.VirtualHosts = nil
	rc.Vhds = &routev3.Vhds{ConfigSource: adsSource()}
	return vhosts
}

// virtualHostName is the name of a host's virtual host on a listener: the
// host, or, when it is discovered over VHDS, its resource name.
func (l listenerSide) virtualHostName(host string) string {
	if l.discoveredIn != "" {
		return VirtualHostResourceName(l.discoveredIn, host)
	}
	return host
}

// httpSide is what the routes of plain-HTTP listener l know of it.
func (c *Renderer) httpSide(l *ir.Listener) listenerSide {
	d := l.Downstream
	side := listenerSide{port: l.Port, publicPort: l.PublicPort, scopes: c.routeScopes,
		forwardedProto: d != nil && (d.ProxyHeaders == ir.ProxyHeadersTrusted || d.ProxyProtocol)}
	if c.opts.VirtualHostDiscovery {
		side.discoveredIn = l.Name
	}
	return side
}

// redactVirtualHost is RedactRoute for a virtual host sent over VHDS: its
// routes carry basic authentication's user files as a route
// configuration's do.
func redactVirtualHost(vh *routev3.VirtualHost) *routev3.VirtualHost {
	out := RedactRoute(&routev3.RouteConfiguration{VirtualHosts: []*routev3.VirtualHost{vh}}).(*routev3.RouteConfiguration)
	if len(out.GetVirtualHosts()) != 1 {
		return &routev3.VirtualHost{Name: vh.GetName()} // nothing rather than the hashes
	}
	return out.GetVirtualHosts()[0]
}

// redactVirtualHosts is redactVirtualHost over a list.
func redactVirtualHosts(vhs []*routev3.VirtualHost) []*routev3.VirtualHost {
	out := make([]*routev3.VirtualHost, len(vhs))
	for i, vh := range vhs {
		out[i] = redactVirtualHost(vh)
	}
	return out
}

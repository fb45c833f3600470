package envoy

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Virtual hosts over VHDS for delta Envoys alone (Options.DeltaVirtualHostDiscovery,
// serve's default, issue 31). Without route scopes, the plain-HTTP route
// configuration holds every host, and every Ingress change sends all of it
// to every Envoy: the bytes of a change are the table times the fleet. An
// Envoy on delta xDS can take its virtual hosts over VHDS instead, one
// resource each, so that a change sends the one it touched; a SotW Envoy
// cannot (Envoy refuses VHDS on a SotW ADS stream). So the render has both
// forms: Resources.Routes holds the route configuration whole, which SotW
// Envoys get, and Resources.DeltaRoutes the same configuration without its
// virtual hosts and saying they come over VHDS, which delta Envoys get in
// its place, with Resources.VirtualHosts. The virtual hosts are the same
// messages as the whole configuration's but for their names (vhds.go), so
// both kinds of Envoy route alike.

// deltaDiscovered is what the last render made for delta Envoys, kept so
// that what did not change is handed out again as the same message (xds
// tells what changed by identity).
type deltaDiscovered struct {
	// vhosts maps a virtual host of a whole route configuration to its
	// copy named for VHDS.
	vhosts map[*routev3.VirtualHost]*routev3.VirtualHost
	// stubs are the route configurations without virtual hosts, by name.
	stubs map[string]*routev3.RouteConfiguration
	// placeholders are the virtual hosts of route configurations that
	// have none yet (noHostYet), by name.
	placeholders map[string]*routev3.VirtualHost
}

// noHostYetDomain is the domain of the virtual host delta Envoys are sent
// while a plain-HTTP route configuration has none: of the reserved
// .invalid top-level domain (RFC 2606), so that no real host is it.
const noHostYetDomain = "no-host-yet.invalid"

// noHostYet is the one virtual host Envoys are sent over VHDS for a
// route configuration with none (a new cluster, or one of Gateway API
// routes alone), as shipped and with serve --vhds alike: Envoy takes an
// answer of no virtual host as no answer,
// and its listener waited out the VHDS initial fetch (15 s) to be ready.
// It has no route, so a request naming its domain is answered 404, as one
// naming any host without a virtual host is.
func (c *Renderer) noHostYet(rcName string, next *deltaDiscovered) *routev3.VirtualHost {
	vh := c.delta.placeholders[rcName]
	if vh == nil {
		vh = &routev3.VirtualHost{Name: VirtualHostResourceName(rcName, noHostYetDomain), Domains: []string{noHostYetDomain}}
	}
	if next.placeholders == nil {
		next.placeholders = map[string]*routev3.VirtualHost{}
	}
	next.placeholders[rcName] = vh
	return vh
}

// deltaDiscovery says whether this render gives delta Envoys the
// plain-HTTP virtual hosts over VHDS: not when every Envoy gets them so
// (VirtualHostDiscovery), nor with route scopes, which split the table
// their own way for every Envoy.
func (c *Renderer) deltaDiscovery() bool {
	return c.opts.DeltaVirtualHostDiscovery && !c.opts.VirtualHostDiscovery && c.routeScopes == 0
}

// discoverForDelta returns, for a whole plain-HTTP route configuration
// just made, the configuration delta Envoys get in its place and the
// virtual hosts they get over VHDS. rc is not changed.
func (c *Renderer) discoverForDelta(rc *routev3.RouteConfiguration, next *deltaDiscovered) (*routev3.RouteConfiguration, []*routev3.VirtualHost) {
	vhosts := make([]*routev3.VirtualHost, len(rc.VirtualHosts))
	for i, vh := range rc.VirtualHosts {
		cp := c.delta.vhosts[vh]
		if cp == nil {
			cp = renamedVirtualHost(vh, VirtualHostResourceName(rc.GetName(), vh.GetName()))
		}
		next.vhosts[vh] = cp
		vhosts[i] = cp
	}
	if len(vhosts) == 0 {
		vhosts = []*routev3.VirtualHost{c.noHostYet(rc.GetName(), next)}
	}
	stub := withoutVirtualHosts(rc)
	stub.Vhds = &routev3.Vhds{ConfigSource: adsSource()}
	if last := c.delta.stubs[rc.GetName()]; last != nil && proto.Equal(last, stub) {
		stub = last
	}
	next.stubs[rc.GetName()] = stub
	return stub, vhosts
}

// renamedVirtualHost is a shallow copy of vh under another name: the two
// share every other field, which no one writes once handed out, and what
// vh keeps encoded (compactVirtualHost).
func renamedVirtualHost(vh *routev3.VirtualHost, name string) *routev3.VirtualHost {
	out := &routev3.VirtualHost{}
	src, dst := vh.ProtoReflect(), out.ProtoReflect()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dst.Set(fd, v)
		return true
	})
	dst.SetUnknown(src.GetUnknown())
	out.Name = name
	return out
}

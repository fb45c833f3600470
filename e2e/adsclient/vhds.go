package adsclient

import (
	"slices"
	"strings"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// Virtual host discovery (VHDS), as Envoy does it on a delta stream: a
// route configuration that says its virtual hosts come over VHDS makes the
// client subscribe to the VirtualHost type with the configuration's name,
// which the server takes as a namespace, and every virtual host named
// "<configuration>/<anything>" it sends belongs to that configuration.
// Snapshots show such a configuration with those virtual hosts in it,
// sorted by name, so that readers of Routes see one routing table either
// way; Received[RouteType] is then when that table last changed, over RDS
// or over VHDS.

// discovery is what the client holds of VHDS: the route configurations as
// received (without their virtual hosts), and the virtual hosts of each,
// by configuration and name.
type discovery struct {
	bare   map[string]*routev3.RouteConfiguration
	vhosts map[string]map[string]*routev3.VirtualHost
}

func (d discovery) clone() discovery {
	return discovery{bare: d.bare, vhosts: d.vhosts} // never written into: see applyRoutes and applyVirtualHosts
}

// namespaceOf is the namespace of a resource name, as Envoy's namespace
// matching has it: what comes before its last "/".
func namespaceOf(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// discoveredNames are the route configurations held that take their
// virtual hosts over VHDS, sorted.
func discoveredNames(s *Snapshot) []string {
	var names []string
	for name := range s.discovery.bare {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// applyRoutes installs route configurations received (delta): those that
// take their virtual hosts over VHDS are kept aside and shown with the
// virtual hosts held for them.
func (s *Snapshot) applyRoutes(updates map[string]*routev3.RouteConfiguration, removed []string) {
	plain := map[string]*routev3.RouteConfiguration{}
	bare := clone(s.discovery.bare)
	for name, rc := range updates {
		if rc.GetVhds() != nil {
			bare[name] = rc
			plain[name] = s.withVirtualHosts(rc)
			continue
		}
		delete(bare, name)
		plain[name] = rc
	}
	for _, name := range removed {
		delete(bare, name)
	}
	s.discovery.bare = bare
	s.Routes = patch(s.Routes, plain, removed)
}

// applyVirtualHosts installs virtual hosts received over VHDS, and shows
// their route configurations with them.
func (s *Snapshot) applyVirtualHosts(updates map[string]*routev3.VirtualHost, removed []string, received time.Time) {
	vhosts := clone(s.discovery.vhosts)
	touched := map[string]bool{}
	edit := func(ns string) map[string]*routev3.VirtualHost {
		if !touched[ns] {
			touched[ns] = true
			vhosts[ns] = clone(vhosts[ns])
		}
		return vhosts[ns]
	}
	for name, vh := range updates {
		edit(namespaceOf(name))[name] = vh
	}
	for _, name := range removed {
		delete(edit(namespaceOf(name)), name)
	}
	s.discovery.vhosts = vhosts
	shown := map[string]*routev3.RouteConfiguration{}
	for ns := range touched {
		if rc, ok := s.discovery.bare[ns]; ok {
			shown[ns] = s.withVirtualHosts(rc)
		}
	}
	s.Routes = merge(s.Routes, shown)
	s.Received[resource.RouteType] = received
}

// pruneDiscovered drops the virtual hosts of route configurations no
// longer subscribed to.
func (s *Snapshot) pruneDiscovered(names []string) {
	keep := func(name string) bool {
		_, found := slices.BinarySearch(names, name)
		return found
	}
	s.discovery.bare = filter(s.discovery.bare, keep)
	s.discovery.vhosts = filter(s.discovery.vhosts, keep)
}

// withVirtualHosts is a route configuration received without its virtual
// hosts, with those held for it.
func (s *Snapshot) withVirtualHosts(rc *routev3.RouteConfiguration) *routev3.RouteConfiguration {
	out := proto.Clone(rc).(*routev3.RouteConfiguration)
	held := s.discovery.vhosts[rc.GetName()]
	names := make([]string, 0, len(held))
	for name := range held {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out.VirtualHosts = append(out.VirtualHosts, held[name])
	}
	return out
}

// inNamespace says whether a virtual host's name is in the namespace of a
// route configuration among names (sorted).
func inNamespace(names []string, name string) bool {
	_, found := slices.BinarySearch(names, namespaceOf(name))
	return found
}

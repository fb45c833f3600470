package envoy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Route scopes (serve --route-scopes N, issue 18). Envoy builds a route
// configuration's whole table again on every update of it, whatever
// changed: with one plain-HTTP route configuration of every host, an
// Ingress change at 10,000 Ingresses costs each Envoy the rebuilding of
// 20,000 virtual hosts, over VHDS as over RDS. With Options.RouteScopes,
// the plain-HTTP listener routes through Envoy's scoped routes instead:
// N route configurations ("ingress_http/0" ... "ingress_http/N-1"), each
// holding the exact hosts whose names hash to it, so that a change updates,
// and Envoy rebuilds, the one that holds the host changed.
//
// Routing stays Envoy's own, and the same: a scope holds, besides its exact
// hosts, every wildcard virtual host (*.example.com) and the catch-all
// ("*"), so that for any Host the scope it hashes to holds every virtual
// host the one route configuration could have matched it to (the exact
// host of that name, if any, and all the wildcards), and Envoy's choice
// among them (exact, then the longest wildcard, then "*") is the same. A
// host with aliases (server-alias) is in the scope of each of its names.
//
// Envoy picks a scope by an exact key taken from a header; nothing in it
// hashes. So the listener's first filter, a short Lua script
// (routeScopeScript), hashes the request's Host as RouteScope does, puts
// the scope's number in RouteScopeHeader (over any value the client sent)
// and clears the route cache, on which Envoy selects the scope again from
// that header (ConnectionManagerImpl::ActiveStream::refreshCachedRoute).
// The Host it reads is the one Envoy's domain matching reads: without its
// port and trailing dot (strip_any_host_port, strip_trailing_host_dot run
// before any filter), and lower-cased as Envoy lower-cases it. Each route
// configuration removes the header before a request goes upstream.
//
// The scopes come over SRDS, their route configurations over RDS (see
// scopedRoutes): both SotW and delta Envoys take them, unlike VHDS. The price is the script, run on every request of the
// listener (docs/benchmarks.md, "Route scopes").

// RouteScopeHeader carries a request's scope from the script to Envoy's
// scope selection.
const RouteScopeHeader = "x-ingress-xds-route-scope"

// routeScopeFilter is the script's filter: a Lua filter of its own name,
// apart from the response rewrite's (responserewrite.go).
const routeScopeFilter = "ingress-xds.route-scope"

// MaxRouteScopes bounds Options.RouteScopes: each scope is a route
// configuration and an RDS subscription in every Envoy.
const MaxRouteScopes = 4096

// routeScopeModulus keeps the hash's running value small enough that the
// script's arithmetic (LuaJIT's doubles) is exact: below 2^53 at every step.
const routeScopeModulus = 1000003

// RouteScope is the scope, of n, whose route configuration holds host's
// virtual host: the routeScopeScript's hash, byte for byte.
func RouteScope(host string, n int) int {
	h := 0
	for i := 0; i < len(host); i++ {
		c := int(host[i])
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		h = (h*31 + c) % routeScopeModulus
	}
	return h % n
}

// routeScopeScript is the listener's first filter with n scopes: it
// computes RouteScope of the request's Host.
func routeScopeScript(n int) string {
	return fmt.Sprintf(`local scopes = %d
function envoy_on_request(handle)
  local headers = handle:headers()
  local host = headers:get(":authority") or ""
  local h = 0
  for i = 1, #host do
    local c = host:byte(i)
    if c >= 65 and c <= 90 then c = c + 32 end
    h = (h * 31 + c) %% %d
  end
  headers:replace(%q, tostring(h %% scopes))
  handle:clearRouteCache()
end
`, n, routeScopeModulus, RouteScopeHeader)
}

// routeScopeFilterConfig is the script's filter configuration.
func routeScopeFilterConfig(n int) proto.Message {
	return &luav3.Lua{DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: routeScopeScript(n)}}}
}

// ScopeRouteName is the name of scope i's route configuration of the
// listener named listener.
func ScopeRouteName(listener string, i int) string {
	return listener + "/" + strconv.Itoa(i)
}

// scopeList is the route scopes of the listener named listener, n of
// them, each naming its route configuration and keyed by its number.
func scopeList(listener string, n int) []*routev3.ScopedRouteConfiguration {
	scopes := make([]*routev3.ScopedRouteConfiguration, n)
	for i := range scopes {
		name := ScopeRouteName(listener, i)
		scopes[i] = &routev3.ScopedRouteConfiguration{
			Name:                   name,
			RouteConfigurationName: name,
			Key: &routev3.ScopedRouteConfiguration_Key{Fragments: []*routev3.ScopedRouteConfiguration_Key_Fragment{{
				Type: &routev3.ScopedRouteConfiguration_Key_Fragment_StringKey{StringKey: strconv.Itoa(i)},
			}}},
		}
	}
	return scopes
}

// scopedRoutes is the connection manager's route specifier with route
// scopes: keyed by the header the script sets, the scopes over SRDS and
// their route configurations over RDS, all on the ADS stream. Envoy takes
// neither a route configuration over RDS from a list of scopes in the
// listener ("not supported with inline scoped routes") nor, sensibly, every
// route configuration inline in the listener, where any change would
// replace the listener: so the scopes come over SRDS, where they never
// change while the number of scopes does not.
func scopedRoutes(listener string) *hcmv3.HttpConnectionManager_ScopedRoutes {
	return &hcmv3.HttpConnectionManager_ScopedRoutes{ScopedRoutes: &hcmv3.ScopedRoutes{
		Name: listener,
		ScopeKeyBuilder: &hcmv3.ScopedRoutes_ScopeKeyBuilder{Fragments: []*hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder{{
			Type: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_{
				HeaderValueExtractor: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor{
					Name:        RouteScopeHeader,
					ExtractType: &hcmv3.ScopedRoutes_ScopeKeyBuilder_FragmentBuilder_HeaderValueExtractor_Index{Index: 0},
				},
			},
		}}},
		RdsConfigSource: adsSource(),
		ConfigSpecifier: &hcmv3.ScopedRoutes_ScopedRds{ScopedRds: &hcmv3.ScopedRds{ScopedRdsConfigSource: adsSource()}},
	}}
}

// scopesOf is the route scopes of the listener named listener: the same
// list every time, so that the xDS layer finds it unchanged at a glance.
func (c *Renderer) scopesOf(listener string) []*routev3.ScopedRouteConfiguration {
	if c.scopeLists == nil {
		c.scopeLists = map[string][]*routev3.ScopedRouteConfiguration{}
	}
	list, ok := c.scopeLists[listener]
	if !ok {
		list = scopeList(listener, c.opts.RouteScopes)
		c.scopeLists[listener] = list
	}
	return list
}

// routeScopeUse is the script's filter when the renderer splits routes.
func (c *Renderer) routeScopeUse() filterSet {
	if c.opts.RouteScopes > 0 {
		return useRouteScope
	}
	return 0
}

// scopeEntry is a scope's route configuration as last rendered, and the
// virtual hosts and settings it was made of.
type scopeEntry struct {
	vhosts []*routev3.VirtualHost
	msg    *routev3.RouteConfiguration
}

// scopedRouteConfigurations splits a plain-HTTP route configuration just
// made (rc, whose virtual hosts are vhosts' renderings, in order) into
// c.opts.RouteScopes. A scope whose virtual hosts and settings are those
// of its previous rendering is that same message, so that the xDS layer
// finds it unchanged by identity and sends nothing for it.
func (c *Renderer) scopedRouteConfigurations(rc *routev3.RouteConfiguration, vhosts []*ir.VirtualHost) []*routev3.RouteConfiguration {
	n := c.opts.RouteScopes
	settings := proto.Clone(withoutVirtualHosts(rc)).(*routev3.RouteConfiguration)
	settings.RequestHeadersToRemove = append(settings.RequestHeadersToRemove, RouteScopeHeader)
	scoped := make([][]*routev3.VirtualHost, n)
	seen := make([]int, 0, 4)
	for i, vh := range vhosts {
		msg := rc.VirtualHosts[i]
		if isWildcard(vh.Host) {
			for s := range scoped {
				scoped[s] = append(scoped[s], msg)
			}
			continue
		}
		seen = seen[:0]
		for _, name := range append([]string{vh.Host}, vh.Aliases...) {
			s := RouteScope(name, n)
			if !slices.Contains(seen, s) {
				seen = append(seen, s)
				scoped[s] = append(scoped[s], msg)
			}
		}
	}
	same := c.scopeSettings != nil && proto.Equal(c.scopeSettings, settings)
	if !same {
		c.scopeSettings = settings
	}
	if len(c.scopes) != n {
		c.scopes = make([]scopeEntry, n)
	}
	out := make([]*routev3.RouteConfiguration, n)
	for s, vhs := range scoped {
		e := &c.scopes[s]
		if !same || e.msg == nil || !slices.Equal(e.vhosts, vhs) {
			msg := proto.Clone(c.scopeSettings).(*routev3.RouteConfiguration)
			msg.Name = ScopeRouteName(rc.Name, s)
			msg.VirtualHosts = vhs
			*e = scopeEntry{vhosts: vhs, msg: msg}
		}
		out[s] = e.msg
	}
	return out
}

// isWildcard says whether a virtual host's name matches more than itself:
// "*" or "*.example.com".
func isWildcard(host string) bool { return strings.HasPrefix(host, "*") }

// withoutVirtualHosts is a route configuration's settings: a shallow copy
// of every field but its virtual hosts.
func withoutVirtualHosts(rc *routev3.RouteConfiguration) *routev3.RouteConfiguration {
	out := &routev3.RouteConfiguration{}
	dst := out.ProtoReflect()
	rc.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Name() != "virtual_hosts" {
			dst.Set(fd, v)
		}
		return true
	})
	return out
}

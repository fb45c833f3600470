package adsclient

import (
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Route scopes (serve --route-scopes, translate/envoy/scopes.go). A
// listener whose connection manager routes through scopes over SRDS has
// Envoy subscribe to every scope (SRDS takes no names), then to the route
// configuration each scope names, over RDS as any other: the client does
// the same, so that Snapshot.Routes holds the scopes' route
// configurations, and Received[RouteType] is when one of them last
// changed.

// followScopes subscribes to the scopes, once, when a listener first says
// its routes come in scopes; subscribe is the protocol's wildcard request.
func (c *Client) followScopes(s *Snapshot, subscribe func(typeURL string, _ error) error) error {
	if c.subs[resource.ScopedRouteType].sent || !usesScopes(s.Listeners) {
		return nil
	}
	return subscribe(resource.ScopedRouteType, nil)
}

// usesScopes says whether a listener's HTTP connection manager takes its
// scopes over SRDS.
func usesScopes(listeners map[string]*listenerv3.Listener) bool {
	for _, l := range listeners {
		for _, chain := range l.GetFilterChains() {
			for _, f := range chain.GetFilters() {
				hcm := &hcmv3.HttpConnectionManager{}
				if f.GetTypedConfig() == nil || f.GetTypedConfig().UnmarshalTo(hcm) != nil {
					continue
				}
				if hcm.GetScopedRoutes().GetScopedRds() != nil {
					return true
				}
			}
		}
	}
	return false
}

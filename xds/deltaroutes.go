package xds

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// Route configurations of delta streams (translate/envoy/vhds_delta.go).
// The translator may hand over, beside the route configurations, some that
// delta Envoys get in place of those with the same names: the same
// settings, their virtual hosts over VHDS, which a SotW Envoy refuses. So
// the route type has two contents: the route configurations, which SotW
// streams are answered from, and the delta streams' own, the same list
// with those replaced. The cache keeps the delta streams' content and
// their route watches under deltaRouteKey, apart from the SotW ones
// (watch.key), so that each protocol is answered from its own content and
// a change of the other's wakes none of its watches. Without replacements
// the two contents are the same.

// deltaRouteKey is the cache's key of the delta streams' route content and
// watches: not a type URL, never sent.
const deltaRouteKey = resource.RouteType + "#delta"

// contentKey is the key of the content a watch of typeURL on a stream of
// the given protocol is answered from.
func contentKey(typeURL string, delta bool) string {
	if delta && typeURL == resource.RouteType {
		return deltaRouteKey
	}
	return typeURL
}

// keyType is the type URL of a content key.
func keyType(key string) string {
	if key == deltaRouteKey {
		return resource.RouteType
	}
	return key
}

// deltaRouteItems is r's route configurations as delta streams get them:
// Routes with those of DeltaRoutes in place of their namesakes, and after
// them those of DeltaRoutes that have none (a VHDS form break-after-make
// keeps: breakaftermake.go); nil when DeltaRoutes is empty.
func deltaRouteItems(r *translate.Resources) []types.Resource {
	if len(r.DeltaRoutes) == 0 {
		return nil
	}
	instead := make(map[string]*routev3.RouteConfiguration, len(r.DeltaRoutes))
	for _, rc := range r.DeltaRoutes {
		instead[rc.GetName()] = rc
	}
	out := make([]types.Resource, len(r.Routes))
	for i, rc := range r.Routes {
		out[i] = rc
		if d, ok := instead[rc.GetName()]; ok {
			out[i] = d
			delete(instead, rc.GetName())
		}
	}
	for _, rc := range r.DeltaRoutes {
		if _, alone := instead[rc.GetName()]; alone {
			out = append(out, rc)
		}
	}
	return out
}

// deltaRoutesSnapshot works out the delta streams' route content of a
// snapshot whose route content is routes, from what it was last (prev,
// with prevRoutes the route content then).
func (s *snapshotter) deltaRoutesSnapshot(r *translate.Resources, routes, prev, prevRoutes *typeSnapshot) (typeSnapshot, error) {
	items := deltaRouteItems(r)
	var ts typeSnapshot
	var err error
	switch {
	case items == nil && (prev.items == nil || prev.version == prevRoutes.version):
		// The same content as the routes' before, and now: the same
		// changes.
		ts = *routes
	default:
		if items == nil {
			items = routes.items // back to the routes' content
		}
		if ts, _, err = s.typeSnapshot(prev, resource.RouteType, items); err != nil {
			return typeSnapshot{}, err
		}
	}
	ts.vhdsRoutes = nil
	for _, item := range ts.items {
		if rc, ok := item.(*routev3.RouteConfiguration); ok && rc.GetVhds() != nil {
			ts.vhdsRoutes = append(ts.vhdsRoutes, rc.GetName())
		}
	}
	return ts, nil
}

// versionMapOf is GetVersionMap of the content a stream of the given
// protocol is served.
func (s *Snapshot) versionMapOf(typeURL string, delta bool) map[string]string {
	if contentKey(typeURL, delta) == deltaRouteKey && s.deltaRoutes.items != nil {
		return s.deltaRoutes.indexes().versions
	}
	return s.GetVersionMap(typeURL)
}

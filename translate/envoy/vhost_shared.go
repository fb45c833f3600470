package envoy

import (
	"slices"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Per-route configuration that every route of a virtual host repeats is
// said once, on the virtual host, where Envoy finds it for a route that
// does not set it: an Ingress's annotations apply to each of its paths, so
// a host of one annotated Ingress repeats the same retry policy, body
// limit and request headers on every route, and these were most of the
// bytes an annotated host added to the route configuration (issue 14,
// docs/benchmarks.md). A route is served exactly as before, because in
// each case Envoy's route-level setting replaces, not merges with, the
// virtual host's, and no route is left with a setting of its own:
//   - retry_policy: "setting a route level entry will take precedence over
//     this config and it'll be treated independently"; only forwarding
//     routes retry, so a redirect or direct response in the host does not
//     stop it, but every forwarding route must have the same policy;
//   - typed_per_filter_config of the buffer filter: the filter takes the
//     most specific configuration (route, then virtual host), so every
//     route must carry the same one, redirects included (the buffer runs
//     before them). Only filters known to read their configuration that
//     way, and whose configuration holds nothing redacted, are moved;
//   - request_headers_to_add / _to_remove: Envoy applies a route's, then
//     its virtual host's, then its route configuration's; every route must
//     have the same lists, which then apply at the virtual host's turn,
//     still ahead of the route configuration's (forwardedHeaders).
//
// Nothing moves from a host of fewer than two routes, where it would save
// nothing.

// sharedFilterConfigs are the HTTP filters whose per-route configuration
// may be said once per virtual host (see above).
var sharedFilterConfigs = [...]string{bufferFilter}

// shareRouteSettings moves what every route of vh repeats onto vh. It runs
// on a virtual host of routes only (nothing set on vh itself yet).
func shareRouteSettings(vh *routev3.VirtualHost) {
	if len(vh.Routes) < 2 {
		return
	}
	shareRetryPolicy(vh)
	for _, name := range sharedFilterConfigs {
		shareFilterConfig(vh, name)
	}
	shareRequestHeaders(vh)
}

func shareRetryPolicy(vh *routev3.VirtualHost) {
	var shared *routev3.RetryPolicy
	forwards := 0
	for _, r := range vh.Routes {
		ra := r.GetRoute()
		if ra == nil {
			continue // a redirect or direct response never retries
		}
		forwards++
		switch {
		case ra.RetryPolicy == nil:
			return
		case shared == nil:
			shared = ra.RetryPolicy
		case !proto.Equal(shared, ra.RetryPolicy):
			return
		}
	}
	if forwards < 2 || vh.RetryPolicy != nil {
		return
	}
	vh.RetryPolicy = shared
	for _, r := range vh.Routes {
		if ra := r.GetRoute(); ra != nil {
			ra.RetryPolicy = nil
		}
	}
}

func shareFilterConfig(vh *routev3.VirtualHost, name string) {
	var shared *anypb.Any
	for _, r := range vh.Routes {
		cfg := r.TypedPerFilterConfig[name]
		switch {
		case cfg == nil:
			return
		case shared == nil:
			shared = cfg
		case !proto.Equal(shared, cfg):
			return
		}
	}
	if vh.TypedPerFilterConfig[name] != nil {
		return
	}
	if vh.TypedPerFilterConfig == nil {
		vh.TypedPerFilterConfig = map[string]*anypb.Any{}
	}
	vh.TypedPerFilterConfig[name] = shared
	for _, r := range vh.Routes {
		delete(r.TypedPerFilterConfig, name)
		if len(r.TypedPerFilterConfig) == 0 {
			r.TypedPerFilterConfig = nil
		}
	}
}

func shareRequestHeaders(vh *routev3.VirtualHost) {
	first := vh.Routes[0]
	if len(first.RequestHeadersToAdd) == 0 && len(first.RequestHeadersToRemove) == 0 {
		return
	}
	for _, r := range vh.Routes[1:] {
		if !sameHeaderOptions(first.RequestHeadersToAdd, r.RequestHeadersToAdd) || !slices.Equal(first.RequestHeadersToRemove, r.RequestHeadersToRemove) {
			return
		}
	}
	if len(vh.RequestHeadersToAdd) != 0 || len(vh.RequestHeadersToRemove) != 0 {
		return
	}
	vh.RequestHeadersToAdd, vh.RequestHeadersToRemove = first.RequestHeadersToAdd, first.RequestHeadersToRemove
	for _, r := range vh.Routes {
		r.RequestHeadersToAdd, r.RequestHeadersToRemove = nil, nil
	}
}

// sameHeaderOptions reports whether a and b are the same header changes in
// the same order (the order matters to Envoy).
func sameHeaderOptions(a, b []*corev3.HeaderValueOption) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

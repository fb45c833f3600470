package envoy

import (
	"fmt"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The HTTP filters' names, which are also the keys of their per-route
// configuration.
const (
	rbacFilter   = "envoy.filters.http.rbac"
	routerFilter = "envoy.filters.http.router"
)

// filterSet is a set of optional HTTP filters. A filter is in a listener's
// chain only when some route the listener serves needs it, so that routes
// without a policy pay nothing for it.
type filterSet uint32

const (
	useRBAC filterSet = 1 << iota
	useBuffer
	useStatefulSession
	useCustomResponse
	useExtAuthz
	useLua
	useClientCertSubject
	useRateLimit
	useRateLimitExempt
	useAuthCookie
	useBlock
	useOnDemand
	useResponseRate
	useConnLimit
	useResponsePace
	useOnSuccess
	// useNoAccessLog is no filter: some route is not logged, which the
	// access log's filter then reads (accesslog.go).
	useNoAccessLog
	// useTracing is no filter either: some route is traced (tracing.go).
	useTracing
	useNonIdempotent
)

// httpFilter is one optional filter: its place is its index in
// httpFilterOrder. Each does its work through per-route configuration
// (route.go); its listener-wide entry only puts it in the chain.
type httpFilter struct {
	name   string
	use    filterSet
	config func() proto.Message
	// listenerConfig, when set, is the configuration instead of config:
	// the listener's own (block.go), not its routes'.
	listenerConfig func(*ir.Listener) proto.Message
	// disabled filters run only on routes with a configuration of their
	// own: for those whose listener-wide configuration would act.
	disabled bool
}

// httpFilterOrder is the HTTP filter chain, in its one fixed order; the
// router always comes last. A new filter takes its place here, a bit of
// filterSet, and its per-route configuration in the feature's file.
func httpFilterOrder() []httpFilter {
	return []httpFilter{
		// On-demand clusters before all (ondemand.go): when a route's
		// cluster comes, Envoy re-runs the request's chain from its start,
		// so that any filter before this one would act twice. On in the
		// route configurations only.
		{name: onDemandFilter, use: useOnDemand, config: onDemandListenerConfig, disabled: true},
		// Then compression (compression.go): one filter per setting the
		// routes ask. On the way out it runs after every filter below,
		// so it compresses the response as the client gets it, the error
		// pages' included, as nginx's gzip is its last body filter.
		{name: compressorFilterPrefix},
		// Then the error pages (errorpages.go): nginx's error_page
		// replaces a response of its codes whoever made it (the upstream,
		// or nginx refusing a client or a body), so the filter sees every
		// response, the other filters' local replies included, and the
		// request it re-runs passes every filter again.
		{name: customResponseFilter, use: useCustomResponse, config: customResponseListenerConfig},
		// Then the ConfigMap's block-user-agents and block-referers
		// (block.go): nginx refuses them in every server's rewrite phase,
		// ahead of everything its locations do; a listener's filter, on
		// every route.
		{name: blockFilter, use: useBlock, listenerConfig: blockListenerConfig},
		// Then the client certificate's subject (clientcert.go,
		// auth-tls-match-cn): nginx checks it in its server's rewrite
		// phase, before any location's CORS, address or authentication
		// check.
		{name: clientCertFilter, use: useClientCertSubject, config: clientCertFilterConfig, disabled: true},
		// CORS needs no filter: its preflights have routes of their own
		// (cors.go), on which the filters below are off, as nginx answers
		// them in its rewrite phase, before its access phase.
		// Then how fast a client may ask (ratelimit.go), as nginx's
		// limit_req runs in its preaccess phase, before allow and deny: a
		// refused client over its rate gets 503, as from nginx. First the
		// shadow RBAC that tags exempt clients (limit-allowlist), then the
		// limit that reads the tag.
		{name: rateLimitExemptFilter, use: useRateLimitExempt, config: rateLimitExemptListenerConfig, disabled: true},
		{name: rateLimitFilter, use: useRateLimit, config: rateLimitListenerConfig, disabled: true},
		// Then how many requests a client may have in flight
		// (connlimit.go, limit-connections), nginx's limit_conn, in the
		// same preaccess phase: after the rate, so that a request refused
		// by it is never counted in flight, as nginx's limit_req runs
		// before its limit_conn.
		{name: connLimitFilter, use: useConnLimit, config: connLimitListenerConfig, disabled: true},
		// Then who may ask at all: with no rules of its own, the filter
		// enforces only the routes' (RBACPerRoute).
		{name: rbacFilter, use: useRBAC, config: func() proto.Message { return &rbacv3.RBAC{} }},
		// Then the headers added on success only (headervalues.go): on
		// the way out it runs after every filter below, so it sees the
		// final status, the router's and the other filters' alike.
		{name: onSuccessFilter, use: useOnSuccess, config: onSuccessListenerConfig, disabled: true},
		// Then the auth service's cookies (authz_cookie.go): before
		// ext_authz, so that on the way out it sees the response after
		// ext_authz has added them, and passes them on the statuses
		// nginx's add_header does.
		{name: authCookieFilter, use: useAuthCookie, config: func() proto.Message { return authCookieListenerConfig() }, disabled: true},
		// Then who the client is (authz.go): nginx's auth_basic and
		// auth_request come after allow and deny in its access phase, and
		// only a client let in by address is worth a password check or a
		// call to an external service.
		{name: extAuthzFilter, use: useExtAuthz, config: func() proto.Message { return extAuthzListenerConfig() }, disabled: true},
		// Then the body bound (bodylimit.go): only a request let in is
		// worth holding in memory. nginx, too, reads a body only after
		// its access phase, but it refuses a Content-Length over the
		// bound before that phase: such a request from a refused client
		// gets 413 from nginx, 403 here.
		{name: bufferFilter, use: useBuffer, config: func() proto.Message { return bufferListenerConfig() }, disabled: true},
		// Last, the session cookie (affinity.go): it only tells the
		// router's load balancer which endpoint to pick, and a request
		// refused or answered before has no endpoint to stick to.
		{name: statefulSessionFilter, use: useStatefulSession, config: statefulSessionListenerConfig},
		// After it, nearest the router, the response rewrite
		// (responserewrite.go): it must see the upstream's headers as
		// they came, before the session cookie is added to them, as
		// nginx's proxy_redirect and proxy_cookie_* see only the
		// upstream's.
		{name: luaFilter, use: useLua, config: func() proto.Message { return luaListenerConfig() }, disabled: true},
		// Nearest the router, each response's pace (responserate.go,
		// limit-rate): it slows the body as it leaves the router, before
		// any filter above sees it, and paces it whatever they add.
		{name: responseRateFilter, use: useResponseRate, config: responseRateListenerConfig, disabled: true},
		// Or, for a pace with an amount at full speed first
		// (limit-rate-after), the authorisation service's
		// (responsepace.go); a route has one or the other.
		{name: responsePaceFilter, use: useResponsePace, config: responsePaceListenerConfig, disabled: true},
		// Last, nearest the router, what is retried after a request was
		// sent (nonidempotent.go): nginx passes no POST, LOCK or PATCH
		// to the next server once sent, and any other method on. The
		// router reads the header it sets, so it comes after every
		// filter that could answer or change the request; it does
		// nothing to responses, so the pace above still slows the body
		// first.
		{name: nonIdempotentFilter, use: useNonIdempotent, config: nonIdempotentListenerConfig},
	}
}

// httpFilters is the chain for the filters a listener's routes use.
func httpFilters(uses filterSet, gz gzipSet, l *ir.Listener) ([]*hcmv3.HttpFilter, error) {
	var out []*hcmv3.HttpFilter
	for _, f := range httpFilterOrder() {
		if f.name == compressorFilterPrefix {
			brotli, err := brotliFilters(l) // compression.go
			if err != nil {
				return nil, err
			}
			compressors, err := compressorFilters(gz)
			if err != nil {
				return nil, err
			}
			out = append(append(out, brotli...), compressors...)
			continue
		}
		if uses&f.use == 0 {
			continue
		}
		var msg proto.Message
		if f.listenerConfig != nil {
			msg = f.listenerConfig(l)
		} else {
			msg = f.config()
		}
		cfg, err := anypb.New(msg)
		if err != nil {
			return nil, fmt.Errorf("packing the %s filter: %w", f.name, err)
		}
		out = append(out, &hcmv3.HttpFilter{Name: f.name, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: cfg}, Disabled: f.disabled})
	}
	router, err := anypb.New(&routerv3.Router{})
	if err != nil {
		return nil, fmt.Errorf("packing the router filter: %w", err)
	}
	return append(out, &hcmv3.HttpFilter{Name: routerFilter, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: router}}), nil
}

// httpConnectionManager is the network filter of listener l that routes
// HTTP by the named route configuration, fetched over ADS.
func httpConnectionManager(l *ir.Listener, routeName string, uses filterSet, gz gzipSet) (*listenerv3.Filter, error) {
	return httpConnectionManagerWith(l, routeName, uses, gz, 0)
}

// httpConnectionManagerWith is httpConnectionManager routing through
// scopes route scopes (scopes.go) when scopes is above 0.
func httpConnectionManagerWith(l *ir.Listener, routeName string, uses filterSet, gz gzipSet, scopes int) (*listenerv3.Filter, error) {
	hcm, err := connectionManager(l, routeName, uses, gz, scopes)
	if err != nil {
		return nil, err
	}
	return packConnectionManager(hcm)
}

// connectionManager is httpConnectionManagerWith's message.
func connectionManager(l *ir.Listener, routeName string, uses filterSet, gz gzipSet, scopes int) (*hcmv3.HttpConnectionManager, error) {
	if l.Block != nil {
		uses |= useBlock
	}
	filters, err := httpFilters(uses, gz, l)
	if err != nil {
		return nil, err
	}
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: l.Name,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeName,
		}},
		HttpFilters: filters,
		// example.com. is example.com.
		StripTrailingHostDot: true,
		// /a/../b must not slip past a route for /b's neighbours.
		NormalizePath:    wrapperspb.Bool(true),
		UseRemoteAddress: wrapperspb.Bool(true),
		// The client's address (RBAC's remote_ip, the rate limit's
		// remote_address, X-Forwarded-For's last entry, X-Envoy-External-
		// Address) is the peer's, or, past proxies the operator trusts,
		// the address X-Forwarded-For names that many hops from its
		// right; with 0 the header cannot change it.
		XffNumTrustedHops: l.TrustedHops,
		// //admin is /admin, as nginx's merge_slashes (on by default)
		// makes it before choosing a location: otherwise a request for
		// //admin would miss the /admin route, and the source ranges or
		// authentication on it, and reach another Ingress's /.
		MergeSlashes: true,
		// /admin%2Fx is /admin/x for routing, or it would miss /admin's
		// route and its access controls (ir.EscapedSlashes).
		PathWithEscapedSlashesAction: escapedSlashesAction(l.EscapedSlashes),
		// A client's X-Request-ID reaches the upstream as sent, and a
		// request without one gets a new one, as ingress-nginx's $req_id
		// (generate-request-id, on by default); Envoy would otherwise
		// replace an edge client's.
		PreserveExternalRequestId: true,
		// WebSocket upgrades pass on every route, as through nginx (whose
		// template sets the Upgrade and Connection headers everywhere).
		UpgradeConfigs: []*hcmv3.HttpConnectionManager_UpgradeConfig{{UpgradeType: "websocket"}},
	}
	if !l.KeepHostPort {
		// Hosts match without their port, whatever port the client
		// used, and nothing after routing sees it (nginx's $host); with
		// KeepHostPort the route configurations ignore it instead.
		hcm.StripPortMode = &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true}
	}
	if hcm.LocalReplyConfig, err = localReplyConfig(l.LocalReplyCodes); err != nil { // localreply.go
		return nil, err
	}
	if scopes > 0 {
		// scopes.go: the scope picked before routing, from the Host.
		hcm.RouteSpecifier = scopedRoutes(routeName)
		mutation, err := routeScopeMutation(scopes)
		if err != nil {
			return nil, err
		}
		hcm.EarlyHeaderMutationExtensions = mutation
	}
	if err := applyDownstream(hcm, l, uses); err != nil { // downstream.go
		return nil, err
	}
	if err := applyRequestMetrics(hcm, l); err != nil { // requestmetrics.go
		return nil, err
	}
	if err := applyTracing(hcm, l, uses); err != nil { // tracing.go
		return nil, err
	}
	return hcm, nil
}

// packConnectionManager is a listener's network filter of hcm.
func packConnectionManager(hcm *hcmv3.HttpConnectionManager) (*listenerv3.Filter, error) {
	hcmAny, err := anypb.New(hcm)
	if err != nil {
		return nil, fmt.Errorf("packing http connection manager: %w", err)
	}
	return &listenerv3.Filter{
		Name:       "envoy.filters.network.http_connection_manager",
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: hcmAny},
	}, nil
}

// escapedSlashesAction is Envoy's form of a listener's EscapedSlashes.
func escapedSlashesAction(e ir.EscapedSlashes) hcmv3.HttpConnectionManager_PathWithEscapedSlashesAction {
	switch e {
	case ir.EscapedSlashesForward:
		return hcmv3.HttpConnectionManager_UNESCAPE_AND_FORWARD
	case ir.EscapedSlashesReject:
		return hcmv3.HttpConnectionManager_REJECT_REQUEST
	case ir.EscapedSlashesKeep:
		return hcmv3.HttpConnectionManager_KEEP_UNCHANGED
	default:
		return hcmv3.HttpConnectionManager_UNESCAPE_AND_REDIRECT
	}
}

package envoy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// renderVirtualHost renders one host's routes for a listener; on an HTTPS
// listener redirects to HTTPS are plain routes. It also says which
// optional HTTP filters the routes use.
func renderVirtualHost(vh *ir.VirtualHost, l listenerSide) (*routev3.VirtualHost, filterSet, error) {
	evh := &routev3.VirtualHost{Name: l.virtualHostName(vh.Host), Domains: append([]string{vh.Host}, vh.Aliases...), Routes: make([]*routev3.Route, 0, len(vh.Routes))}
	var uses filterSet
	for i, r := range vh.Routes {
		if !l.serves(r) {
			continue
		}
		redirects, u, ok, err := redirectRoutes(vh, r, l)
		if err != nil {
			return nil, 0, fmt.Errorf("virtual host %s, route %d: %w", vh.Host, i, err)
		}
		if ok {
			if redirects, err = withCORS(redirects, r.Policy); err != nil {
				return nil, 0, fmt.Errorf("virtual host %s, route %d: %w", vh.Host, i, err)
			}
			evh.Routes = append(evh.Routes, redirects...)
			uses |= u | applyRouteLog(redirects, r) // accesslog.go
			continue
		}
		route, u, err := renderRoute(pinnedHost(vh), r, l)
		if err != nil {
			return nil, 0, fmt.Errorf("virtual host %s, route %d: %w", vh.Host, i, err)
		}
		// The session cookie is Secure on HTTPS listeners, and may need
		// routes of its own ahead of this one (affinity.go).
		ahead, a, err := applyAffinity(route, r.Policy, l)
		if err != nil {
			return nil, 0, fmt.Errorf("virtual host %s, route %d: %w", vh.Host, i, err)
		}
		u |= a
		// A redirect to HTTPS that only some requests get (redirectRoutes)
		// comes first.
		routes, err := withCORS(append(append(redirects, ahead...), route), r.Policy)
		if err != nil {
			return nil, 0, fmt.Errorf("virtual host %s, route %d: %w", vh.Host, i, err)
		}
		evh.Routes = append(evh.Routes, routes...)
		uses |= u | applyRouteLog(routes, r) // accesslog.go
	}
	// The host's client certificate policy (clientcert.go) adds routes
	// ahead of its others and changes theirs.
	u, err := applyClientCert(evh, vh.ClientCert, l)
	if err != nil {
		return nil, 0, fmt.Errorf("virtual host %s: %w", vh.Host, err)
	}
	shareRouteSettings(evh) // vhost_shared.go
	return compactVirtualHost(evh), uses | u, nil
}

// compactVirtualHost keeps a virtual host's routes as their encoding, as
// unknown fields, which protobuf encodes as they are: on the wire the
// message is the same, and routes as Go messages take far more memory
// than their encoding (docs/benchmarks.md, "Optimisations", 15). The name
// and domains stay fields; the rest (routes and what
// shareRouteSettings moved up from them) is encoded. Name and domains are
// the first fields written, so the encoding is the whole message's. A
// virtual host that fails validation is left whole, for the xDS layer to
// refuse with the detail.
func compactVirtualHost(vh *routev3.VirtualHost) *routev3.VirtualHost {
	if len(vh.Routes) == 0 || vh.ValidateAll() != nil {
		return vh
	}
	rest := &routev3.VirtualHost{
		Routes:                 vh.Routes,
		RetryPolicy:            vh.RetryPolicy,
		TypedPerFilterConfig:   vh.TypedPerFilterConfig,
		RequestHeadersToAdd:    vh.RequestHeadersToAdd,
		RequestHeadersToRemove: vh.RequestHeadersToRemove,
	}
	return keepEncoded(vh, rest, &routev3.VirtualHost{Name: vh.Name, Domains: vh.Domains})
}

// renderRoute renders a route that does not redirect (redirect.go renders
// those).
func renderRoute(host string, r *ir.Route, l listenerSide) (*routev3.Route, filterSet, error) {
	route := &routev3.Route{Match: routeMatch(host, r.Match)}
	p := r.Policy
	switch a := r.Action; {
	case a.Direct != nil:
		route.Action = &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
			Status: a.Direct.Status,
			Body:   &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: a.Direct.Body}},
		}}
		if ct := a.Direct.ContentType; ct != "" {
			route.ResponseHeadersToAdd = append(route.ResponseHeadersToAdd, &corev3.HeaderValueOption{
				Header:       &corev3.HeaderValue{Key: "content-type", Value: literal(ct)},
				AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
			})
		}
	case a.Forward != nil:
		var ra *routev3.RouteAction
		ra, p = forward(a.Forward, p, l)
		applyForwardPolicy(ra, p)
		route.Action = &routev3.Route_Route{Route: ra}
	}
	if p == nil {
		if r.Action.Forward != nil {
			// No retries: neither the retry conditions the route
			// configuration adds nor the listener's filter are the
			// route's (nonidempotent.go).
			disabled, _ := anypb.New(&routev3.FilterConfig{Disabled: true}) // an empty message packs
			route.TypedPerFilterConfig = map[string]*anypb.Any{nonIdempotentFilter: disabled}
			dropRetryOn(route)
		}
		return route, 0, nil
	}
	applyHeaderPolicy(route, p)
	if r.Action.Forward != nil && !retriedAfterSent(p.Retries) { // nonidempotent.go
		dropRetryOn(route)
	}
	uses, err := applyFilterPolicies(route, p, l, r.Action.Forward != nil)
	return route, uses, err
}

// applyFilterPolicies sets the per-route configuration of the optional HTTP
// filters a route's policy needs, and says which those are.
func applyFilterPolicies(route *routev3.Route, p *ir.RoutePolicy, l listenerSide, forwards bool) (filterSet, error) {
	var uses filterSet
	per := map[string]proto.Message{}
	if p.IPRules != nil {
		rules, err := ipRules(p.IPRules)
		if err != nil {
			return 0, err
		}
		per[rbacFilter] = rules
		uses |= useRBAC
	}
	if p.RateLimit != nil {
		limit, exempt, err := rateLimit(p.RateLimit)
		if err != nil {
			return 0, err
		}
		per[rateLimitFilter] = limit
		uses |= useRateLimit
		if exempt != nil {
			per[rateLimitExemptFilter] = exempt
			uses |= useRateLimitExempt
		}
	}
	if p.ResponseRewrite != nil {
		cfg, err := responseRewrite(p.ResponseRewrite)
		if err != nil {
			return 0, fmt.Errorf("response rewrite: %w", err)
		}
		per[luaFilter] = cfg
		uses |= useLua
	}
	if p.Auth != nil {
		cfg := authzPerRoute(p.Auth)
		withCacheScope(cfg, p.Auth, route) // authz_external.go
		per[extAuthzFilter] = cfg
		uses |= useExtAuthz | authCookie(per, p.Auth) // authz_cookie.go
	}
	if h := p.ResponseHeaders; h != nil {
		uses |= onSuccessHeaders(route, per, h) // headervalues.go
	}
	if p.Connections != nil {
		per[connLimitFilter] = connLimit(p.Connections)
		uses |= useConnLimit
	}
	if r := p.ResponseRate; r != nil && r.AfterKiB > 0 {
		per[responsePaceFilter] = responsePace(r) // responsepace.go
		uses |= useResponsePace
	} else if r != nil {
		per[responseRateFilter] = responseRate(r)
		uses |= useResponseRate
	}
	if p.RequestBody != nil {
		per[bufferFilter] = bodyLimit(p.RequestBody)
		uses |= useBuffer
	}
	if p.Tracing != nil {
		uses |= routeTracing(route, p.Tracing) // tracing.go
	}
	if c := p.Compression; c != nil {
		per[compressorName(c)] = compressorOn(c) // compression.go
	}
	uses |= nonIdempotentPerRoute(p.Retries, forwards, per) // nonidempotent.go
	if p.ErrorPages != nil {
		pages, err := errorPages(p.ErrorPages, l)
		if err != nil {
			return 0, err
		}
		per[customResponseFilter] = pages
		uses |= useCustomResponse
	}
	for name, cfg := range per {
		packed, err := anypb.New(cfg)
		if err != nil {
			return 0, fmt.Errorf("packing the %s configuration: %w", name, err)
		}
		if route.TypedPerFilterConfig == nil {
			route.TypedPerFilterConfig = map[string]*anypb.Any{}
		}
		route.TypedPerFilterConfig[name] = packed
	}
	return uses, nil
}

// serves says whether a route is served on this side (Route.Only).
func (l listenerSide) serves(r *ir.Route) bool {
	return r.Only == "" || (r.Only == ir.HTTPS) == l.tls
}

// pinnedHost is the host a route's match pins the label count of: a *.
// wildcard covering exactly one label. An AnyDepth wildcard matches as
// Envoy's own wildcards do (any number of labels): "" pins nothing.
func pinnedHost(vh *ir.VirtualHost) string {
	if vh.AnyDepth {
		return ""
	}
	return vh.Host
}

// routeMatch is a route's match on a virtual host of host (pinnedHost).
func routeMatch(host string, m ir.Match) *routev3.RouteMatch {
	match := &routev3.RouteMatch{}
	switch {
	case m.PathType == ir.PathExact:
		match.PathSpecifier = &routev3.RouteMatch_Path{Path: m.Path}
	case m.PathType == ir.PathRegex:
		match.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: m.Path}}
	case m.Path == "/":
		match.PathSpecifier = &routev3.RouteMatch_Prefix{Prefix: "/"}
	default:
		// Matches /foo, /foo/ and /foo/...: whole segments only.
		match.PathSpecifier = &routev3.RouteMatch_PathSeparatedPrefix{PathSeparatedPrefix: m.Path}
	}
	if strings.HasPrefix(host, "*.") {
		// Envoy's *.example.com also matches a.b.example.com; the Ingress
		// wildcard covers exactly one label, so pin the label count.
		match.Headers = append(match.Headers, &routev3.HeaderMatcher{
			Name: ":authority",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{
					Regex: "(?i)^[^.]+" + regexp.QuoteMeta(strings.TrimPrefix(host, "*")) + "$",
				}},
			}},
		})
	}
	for _, h := range m.Headers {
		hm := &routev3.HeaderMatcher{Name: h.Name, InvertMatch: h.Invert, TreatMissingHeaderAsEmpty: h.MissingIsEmpty}
		if sm := stringMatcher(h.Value); sm != nil {
			hm.HeaderMatchSpecifier = &routev3.HeaderMatcher_StringMatch{StringMatch: sm}
		} else {
			hm.HeaderMatchSpecifier = &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}
		}
		match.Headers = append(match.Headers, hm)
	}
	for _, q := range m.Query {
		qm := &routev3.QueryParameterMatcher{Name: q.Name}
		if sm := stringMatcher(q.Value); sm != nil {
			qm.QueryParameterMatchSpecifier = &routev3.QueryParameterMatcher_StringMatch{StringMatch: sm}
		} else {
			qm.QueryParameterMatchSpecifier = &routev3.QueryParameterMatcher_PresentMatch{PresentMatch: true}
		}
		match.QueryParameters = append(match.QueryParameters, qm)
	}
	return match
}

// stringMatcher renders a StringMatch; nil means any value.
func stringMatcher(s ir.StringMatch) *matcherv3.StringMatcher {
	switch {
	case s.Regex != "":
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: s.Regex}}}
	case s.Exact != "":
		return &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: s.Exact}}
	}
	return nil
}

// forward sends to the route's clusters, on an HTTPS listener to each
// share's cluster over TLS where it has one. A share's own header changes
// are its weighted cluster entry's, so a share that changes headers is a
// weighted cluster even alone. Envoy applies an entry's changes before
// its route's, whatever most_specific_header_mutations_wins says, where
// the IR has the share's after: so where shares change one side's headers
// the route's changes of that side move into every entry, ahead of the
// share's own (foldHeaders), and p is returned without them.
func forward(f *ir.Forward, p *ir.RoutePolicy, l listenerSide) (*routev3.RouteAction, *ir.RoutePolicy) {
	var requests, responses bool
	for _, c := range f.Clusters {
		requests = requests || c.RequestHeaders != nil
		responses = responses || c.ResponseHeaders != nil
	}
	if len(f.Clusters) == 1 && !requests && !responses {
		return &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: f.Clusters[0].For(l.tls)}}, p
	}
	var routeRequests, routeResponses *ir.HeaderChanges
	if p != nil && (requests && p.RequestHeaders != nil || responses && p.ResponseHeaders != nil) {
		kept := *p
		if requests {
			routeRequests, kept.RequestHeaders = p.RequestHeaders, nil
		}
		if responses {
			routeResponses, kept.ResponseHeaders = p.ResponseHeaders, nil
		}
		p = &kept
	}
	wc := &routev3.WeightedCluster{}
	for _, c := range f.Clusters {
		weight := c.Weight
		if len(f.Clusters) == 1 {
			weight = 1 // ignored alone, and Envoy wants a weight above zero
		}
		cw := &routev3.WeightedCluster_ClusterWeight{Name: c.For(l.tls), Weight: wrapperspb.UInt32(weight)}
		if h := foldHeaders(routeRequests, c.RequestHeaders); h != nil {
			cw.RequestHeadersToRemove, cw.RequestHeadersToAdd = setRemoves(h), headerOptions(h)
		}
		if h := foldHeaders(routeResponses, c.ResponseHeaders); h != nil {
			cw.ResponseHeadersToRemove, cw.ResponseHeadersToAdd = setRemoves(h), headerOptions(h)
		}
		wc.Clusters = append(wc.Clusters, cw)
	}
	return &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_WeightedClusters{WeightedClusters: wc}}, p
}

// foldHeaders is the route's header changes then the share's, as one
// list of changes that Envoy applies at once (its removals first, then
// what it sets, then what it adds): what the route sets or adds to a
// header the share sets or removes is dropped, since the share's change
// comes last.
func foldHeaders(route, share *ir.HeaderChanges) *ir.HeaderChanges {
	if route == nil || share == nil {
		if share == nil {
			return route
		}
		return share
	}
	replaced := map[string]bool{}
	for _, name := range share.Remove {
		replaced[strings.ToLower(name)] = true
	}
	for _, h := range share.Set {
		replaced[strings.ToLower(h.Name)] = true
	}
	keep := func(hs []ir.Header) []ir.Header {
		var out []ir.Header
		for _, h := range hs {
			if !replaced[strings.ToLower(h.Name)] {
				out = append(out, h)
			}
		}
		return out
	}
	return &ir.HeaderChanges{
		Remove: append(slices.Clip(route.Remove), share.Remove...),
		Set:    append(keep(route.Set), share.Set...),
		Add:    append(keep(route.Add), share.Add...),
	}
}

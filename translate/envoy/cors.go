package envoy

import (
	"regexp"
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// CORS is rendered as routes, not with Envoy's CORS filter, whose
// behaviour is not ingress-nginx's: it adds nothing to a request without an
// Origin header (ingress-nginx's "*" answers every request), echoes the
// origin where ingress-nginx sends "*", sends the methods, headers and max
// age only on preflights, and answers only OPTIONS requests that carry
// Access-Control-Request-Method (ingress-nginx answers every OPTIONS).
//
// For a route with a CORS policy, the virtual host gets, in this order:
//
//   - for each of the IR route's Envoy routes, a preflight route: its match
//     and OPTIONS (and, for a list of origins, an allowed Origin), answered
//     204 with the CORS headers. Its filters are off: nginx answers it in
//     its rewrite phase, before any access check, rate limit or error page;
//   - the routes themselves with the CORS headers (and, for a list, an
//     allowed Origin matched): route response headers, which Envoy also
//     adds to the answers its filters make for the route (401, 403, 503),
//     as nginx's more_set_headers, which sets them on every response;
//   - with PreflightsOnly and a list of origins, the preflights of the
//     origins not allowed, answered 204 without the CORS headers;
//   - for a list of origins, the routes as they were, for the requests
//     whose Origin is not allowed, which get no CORS header at all.

// corsRoutes returns the Envoy routes of one IR route, routes, with its
// CORS policy applied.
func corsRoutes(routes []*routev3.Route, c *ir.CORS) ([]*routev3.Route, error) {
	headers := corsHeaders(c)
	var origin *routev3.HeaderMatcher
	if !c.AnyOrigin {
		origin = originMatcher(c.AllowOrigins)
	}
	allowed := make([]*routev3.Route, 0, len(routes))
	for _, r := range routes {
		a := proto.Clone(r).(*routev3.Route)
		if origin != nil {
			a.Match.Headers = append(a.Match.Headers, origin)
		}
		a.ResponseHeadersToAdd = append(a.ResponseHeadersToAdd, headers...)
		allowed = append(allowed, a)
	}
	out := make([]*routev3.Route, 0, 4*len(routes))
	for _, a := range allowed {
		p, err := preflightRoute(a, c.PreflightsOnly)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if origin != nil && c.PreflightsOnly {
		// The preflights left are of origins not allowed: answered
		// all the same, without the CORS headers, so that the
		// backend never sees a preflight.
		for _, r := range routes {
			p, err := preflightRoute(r, true)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	out = append(out, allowed...)
	if origin != nil {
		out = append(out, routes...)
	}
	return out, nil
}

// preflightRoute answers an allowed route's OPTIONS requests (its
// preflights only, with preflightsOnly) 204 with its response headers
// (the CORS headers among them), as nginx's return 204.
func preflightRoute(allowed *routev3.Route, preflightsOnly bool) (*routev3.Route, error) {
	p := &routev3.Route{
		Match:                proto.Clone(allowed.Match).(*routev3.RouteMatch),
		Action:               &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: 204}},
		ResponseHeadersToAdd: allowed.ResponseHeadersToAdd,
	}
	p.Match.Headers = append(p.Match.Headers, &routev3.HeaderMatcher{
		Name:                 ":method",
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "OPTIONS"}}},
	})
	if preflightsOnly {
		// The Fetch standard's preflight: an OPTIONS request of
		// another origin that names the method it is asking about.
		for _, name := range []string{"origin", "access-control-request-method"} {
			p.Match.Headers = append(p.Match.Headers, &routev3.HeaderMatcher{
				Name:                 name,
				HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true},
			})
		}
	}
	// Every filter the route configures is off here: the answer comes
	// before them in nginx. But for the client certificate's subject,
	// which nginx checks first, in its server's rewrite phase.
	for name := range allowed.TypedPerFilterConfig {
		if name == clientCertFilter {
			p.TypedPerFilterConfig = setFilterConfig(p.TypedPerFilterConfig, name, allowed.TypedPerFilterConfig[name])
			continue
		}
		off, err := anypb.New(&routev3.FilterConfig{Disabled: true})
		if err != nil {
			return nil, err
		}
		p.TypedPerFilterConfig = setFilterConfig(p.TypedPerFilterConfig, name, off)
	}
	return p, nil
}

func setFilterConfig(m map[string]*anypb.Any, name string, cfg *anypb.Any) map[string]*anypb.Any {
	if m == nil {
		m = map[string]*anypb.Any{}
	}
	m[name] = cfg
	return m
}

// originMatcher matches an allowed Origin, in any case (nginx's ~*).
func originMatcher(origins []ir.StringMatch) *routev3.HeaderMatcher {
	alternatives := make([]string, 0, len(origins))
	for _, o := range origins {
		re := o.Regex
		if re == "" {
			re = regexp.QuoteMeta(o.Exact)
		}
		alternatives = append(alternatives, "(?:"+re+")")
	}
	return &routev3.HeaderMatcher{
		Name: "origin",
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
			MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "(?i)(?:" + strings.Join(alternatives, "|") + ")"}},
		}},
	}
}

// corsHeaders are the CORS response headers, in the template's order, each
// replacing the backend's own (more_set_headers).
func corsHeaders(c *ir.CORS) []*corev3.HeaderValueOption {
	// The allowed origin echoed: the route matched it, so it holds
	// nothing but what an allowed origin may.
	origin := "%REQ(origin)%"
	if c.AnyOrigin && !c.EchoWildcards {
		origin = "*"
	}
	out := []*corev3.HeaderValueOption{setHeader("access-control-allow-origin", origin)}
	if c.AllowCredentials {
		out = append(out, setHeader("access-control-allow-credentials", "true"))
	}
	for _, h := range []struct{ name, value, asked string }{
		{"access-control-allow-methods", c.AllowMethods, "access-control-request-method"},
		{"access-control-allow-headers", c.AllowHeaders, "access-control-request-headers"},
		{"access-control-expose-headers", c.ExposeHeaders, ""},
	} {
		switch {
		case h.value == "":
		case h.value == "*" && c.EchoWildcards && h.asked != "":
			// Envoy sends no header whose value comes out empty:
			// a request that asks nothing gets none.
			out = append(out, setHeader(h.name, "%REQ("+h.asked+")%"))
		default:
			out = append(out, setHeader(h.name, literal(h.value)))
		}
	}
	return append(out, setHeader("access-control-max-age", strconv.FormatInt(c.MaxAgeSeconds, 10)))
}

// setHeader sets a response header, replacing any value it had; value is
// in Envoy's header format (literal escapes text).
func setHeader(name, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: name, Value: value},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

// withCORS applies a route policy's CORS, if any, to the Envoy routes of
// one IR route.
func withCORS(routes []*routev3.Route, p *ir.RoutePolicy) ([]*routev3.Route, error) {
	if p == nil || p.CORS == nil {
		return routes, nil
	}
	return corsRoutes(routes, p.CORS)
}

package envoy

import (
	"fmt"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// listenerSide is what a route's rendering knows of the listener it is
// served on.
type listenerSide struct {
	tls  bool
	port uint32
	// forwardedProto says, on a plain listener, that a request's
	// X-Forwarded-Proto says whether its client came over HTTPS all the
	// same (ingress-nginx's pass_access_scheme, lua_ingress.lua): a
	// trusted proxy in front may have set it (ir.ProxyHeadersTrusted), or
	// the PROXY protocol's port (proxyprotocol.go).
	forwardedProto bool
	// publicPort is ir.Listener.PublicPort.
	publicPort uint32
	// discoveredIn names the route configuration whose virtual hosts are
	// sent over VHDS (vhds.go), or is empty.
	discoveredIn string
	// scopes is the number of route scopes the listener's routes are in
	// (scopes.go), or 0.
	scopes int
}

func (l listenerSide) scheme() string {
	if l.tls {
		return "https"
	}
	return "http"
}

// redirectRoutes renders a route that answers with a redirect on this
// listener (a redirect to HTTPS on plain HTTP, or a redirect action), and
// reports false for a route that does not. On a listener of
// forwardedProto, the redirect to HTTPS is only for a request whose
// X-Forwarded-Proto says http, as lua_ingress.lua's redirect_to_https
// reads pass_access_scheme:
// its routes come ahead of the route's own, which they are returned with
// (when it redirects too) or, reporting false, before.
//
// A redirect that drops the trailing slash becomes up to three Envoy
// routes with the route's match, told apart by the whole :path (which,
// unlike the path match, includes the query): "/" alone, whose Location has
// no path at all, which only a Location header written out can say; a
// path ending in "/" with no query, whose slash a rewrite drops; and the
// rest, redirected as they are.
func redirectRoutes(vh *ir.VirtualHost, r *ir.Route, l listenerSide) ([]*routev3.Route, filterSet, bool, error) {
	var ahead []*routev3.Route
	if h := httpsRedirectOn(r.Policy, vh, l); h != nil {
		action := &routev3.RedirectAction{
			SchemeRewriteSpecifier: &routev3.RedirectAction_HttpsRedirect{HttpsRedirect: true},
			PortRedirect:           h.Port,
			ResponseCode:           redirectCode(h.Code),
		}
		// A redirect to HTTPS answers before any other policy would apply.
		routes := slashRoutes(pinnedHost(vh), r.Match, action, h.StripTrailingSlash, "https://"+requestHost+port(h.Port), h.Code)
		if !l.forwardedProto {
			return routes, 0, true, nil
		}
		for _, route := range routes {
			route.Match.Headers = append(route.Match.Headers, forwardedProtoHTTP())
		}
		ahead = routes
	}
	a := r.Action.Redirect
	if a == nil {
		return ahead, 0, false, nil
	}
	var action *routev3.RedirectAction
	var root string // the Location of "/" when the slash is dropped
	var routes []*routev3.Route
	switch {
	case a.Location != "":
		// Written out, so that it is sent exactly as the user wrote it
		// (a RedirectAction always has a path: "/" at least).
		routes = []*routev3.Route{{
			Match: routeMatch(pinnedHost(vh), r.Match),
			Action: &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{
				Status: a.Code,
			}},
		}}
	case a.Relative:
		// Envoy's redirect URL always has a scheme and host: the response
		// rewrite drops them from the Location (relativeLocation).
		routes = []*routev3.Route{{Match: routeMatch(pinnedHost(vh), r.Match), Action: &routev3.Route_Redirect{Redirect: redirect(a)}}}
	default:
		action = redirect(a)
		if a.ListenerPort {
			// The URL names this listener's port, so also its scheme.
			action.PortRedirect = l.port
			action.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: l.scheme()}
		}
		if a.Host != "" && a.Port == 0 && a.Scheme == "" && !a.ListenerPort && l.publicPort != 0 && l.publicPort != defaultPort(l.tls) {
			// Another host, on this listener's scheme: its port too.
			action.PortRedirect = l.publicPort
		}
		scheme := firstOf(a.Scheme, action.GetSchemeRedirect(), l.scheme())
		host := firstOf(a.Host, requestHost)
		root = scheme + "://" + literal(host) + port(action.PortRedirect)
		routes = slashRoutes(pinnedHost(vh), r.Match, action, a.StripTrailingSlash, root, a.Code)
	}
	var uses filterSet
	for _, route := range routes {
		if r.Policy != nil {
			applyHeaderPolicy(route, r.Policy)
			u, err := applyFilterPolicies(route, r.Policy, l, false)
			if err != nil {
				return nil, 0, false, err
			}
			uses |= u
		}
		switch {
		case a.Location != "":
			route.ResponseHeadersToAdd = append(route.ResponseHeadersToAdd, location(literal(a.Location)))
		case a.Relative:
			if err := relativeLocation(route); err != nil {
				return nil, 0, false, err
			}
			uses |= useLua
		}
	}
	return append(ahead, routes...), uses, true, nil
}

// forwardedProtoHTTP matches a request whose X-Forwarded-Proto is http,
// exactly: lua_ingress.lua redirects when pass_access_scheme == "http". The
// connection manager has set the header where the request had none (from
// the connection) or where its peer is not trusted with it.
func forwardedProtoHTTP() *routev3.HeaderMatcher {
	return &routev3.HeaderMatcher{
		Name: "x-forwarded-proto",
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
			MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "http"},
		}},
	}
}

// httpsRedirectOn is the redirect to HTTPS a route with policy p answers
// with on this listener, if any.
func httpsRedirectOn(p *ir.RoutePolicy, vh *ir.VirtualHost, l listenerSide) *ir.HTTPSRedirect {
	if p == nil || p.HTTPSRedirect == nil || l.tls || p.HTTPSRedirect.OnlyWithCertificate && vh.Certificate == "" {
		return nil
	}
	return p.HTTPSRedirect
}

// defaultPort is the scheme's well-known port.
func defaultPort(tls bool) uint32 {
	if tls {
		return 443
	}
	return 80
}

// requestHost is the request's host in a header value: the HTTP
// connection manager strips any port from it before routing.
const requestHost = "%REQ(:authority)%"

// slashRoutes renders a redirect action, with the routes that drop the
// trailing slash first when strip is set.
func slashRoutes(host string, m ir.Match, action *routev3.RedirectAction, strip bool, root string, code uint32) []*routev3.Route {
	whole := &routev3.Route{Match: routeMatch(host, m), Action: &routev3.Route_Redirect{Redirect: action}}
	if !strip {
		return []*routev3.Route{whole}
	}
	var out []*routev3.Route
	if m.PathType == ir.PathRegex || m.Path == "/" {
		out = append(out, &routev3.Route{
			Match:                pathIs(routeMatch(host, m), &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: "/"}}),
			Action:               &routev3.Route_DirectResponse{DirectResponse: &routev3.DirectResponseAction{Status: code}},
			ResponseHeadersToAdd: []*corev3.HeaderValueOption{location(root)},
		})
	}
	slash := proto.Clone(action).(*routev3.RedirectAction)
	slash.PathRewriteSpecifier = &routev3.RedirectAction_RegexRewrite{RegexRewrite: &matcherv3.RegexMatchAndSubstitute{
		Pattern:      &matcherv3.RegexMatcher{Regex: `^(.*)/$`},
		Substitution: `\1`,
	}}
	out = append(out, &routev3.Route{
		Match: pathIs(routeMatch(host, m), &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{
			SafeRegex: &matcherv3.RegexMatcher{Regex: `^[^?]*/$`},
		}}),
		Action: &routev3.Route_Redirect{Redirect: slash},
	})
	return append(out, whole)
}

// pathIs adds a condition on the whole :path, query included, to a match.
func pathIs(m *routev3.RouteMatch, value *matcherv3.StringMatcher) *routev3.RouteMatch {
	m.Headers = append(m.Headers, &routev3.HeaderMatcher{
		Name:                 ":path",
		HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: value},
	})
	return m
}

// location sets the Location header, replacing the one Envoy gives a 3xx
// direct response (the request's own URL).
func location(value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: "location", Value: value},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

// literal escapes text for a header value, where % starts a command.
func literal(s string) string {
	if s == requestHost {
		return s
	}
	return strings.ReplaceAll(s, "%", "%%")
}

func port(p uint32) string {
	if p == 0 {
		return ""
	}
	return fmt.Sprintf(":%d", p)
}

// firstOf is the first of its arguments that is not empty.
func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

func redirect(r *ir.Redirect) *routev3.RedirectAction {
	out := &routev3.RedirectAction{
		HostRedirect: r.Host,
		PortRedirect: r.Port,
		StripQuery:   r.StripQuery,
		ResponseCode: redirectCode(r.Code),
	}
	if r.Scheme != "" {
		out.SchemeRewriteSpecifier = &routev3.RedirectAction_SchemeRedirect{SchemeRedirect: r.Scheme}
	}
	if r.Path != "" {
		out.PathRewriteSpecifier = &routev3.RedirectAction_PathRedirect{PathRedirect: r.Path}
	}
	if rr := r.PathRegex; rr != nil {
		out.PathRewriteSpecifier = &routev3.RedirectAction_RegexRewrite{RegexRewrite: &matcherv3.RegexMatchAndSubstitute{
			Pattern:      &matcherv3.RegexMatcher{Regex: rr.Pattern},
			Substitution: rr.Substitution,
		}}
	}
	return out
}

func redirectCode(code uint32) routev3.RedirectAction_RedirectResponseCode {
	switch code {
	case 302:
		return routev3.RedirectAction_FOUND
	case 303:
		return routev3.RedirectAction_SEE_OTHER
	case 307:
		return routev3.RedirectAction_TEMPORARY_REDIRECT
	case 308:
		return routev3.RedirectAction_PERMANENT_REDIRECT
	}
	return routev3.RedirectAction_MOVED_PERMANENTLY
}

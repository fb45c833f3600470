package envoy

import (
	"fmt"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	statefulv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	cookiev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"
	httptypev3 "github.com/envoyproxy/go-control-plane/envoy/type/http/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Session affinity (ingress-nginx's affinity: cookie) is Envoy's stateful
// session filter with a cookie session state, rather than a cookie hash
// policy over a ring hash cluster:
//   - the cookie names the endpoint itself, so a client stays on its
//     endpoint for as long as that endpoint is ready, whichever endpoints
//     come and go, as ingress-nginx's persistent mode keeps it (and its
//     balanced mode mostly does); a ring hash moves sessions whenever
//     endpoints change;
//   - it leaves the cluster's load balancer alone: a request without the
//     cookie is balanced as the cluster says (round robin, ewma,
//     upstream-hash-by), as nginx picks the first endpoint, and only its
//     response sets the cookie, where a hash policy needs a ring hash
//     cluster and Envoy writes its cookie from the client's address;
//   - when the endpoint named is gone, the request is balanced again and
//     the response sets a new cookie, as nginx picks a new upstream.
// The cookie is set only when the endpoint that answered is not the one
// the request's cookie named, as nginx sets it only when it picked anew.

// statefulSessionFilter is the filter's name and per-route key.
const statefulSessionFilter = "envoy.filters.http.stateful_session"

// statefulSessionListenerConfig is the filter's listener-wide
// configuration: no session state, so it does nothing on a route without
// a configuration of its own.
func statefulSessionListenerConfig() proto.Message { return &statefulv3.StatefulSession{} }

// applyAffinity sets a forwarding route's session cookie, Secure on an
// HTTPS listener (nginx's $https) or when asked. With SameSite=None only
// for the clients that take it, it returns the routes for those that do
// not, to go ahead of the route: the same route, for their User-Agent,
// with a cookie without SameSite.
func applyAffinity(route *routev3.Route, p *ir.RoutePolicy, l listenerSide) ([]*routev3.Route, filterSet, error) {
	if p == nil || p.Affinity == nil || route.GetRoute() == nil {
		return nil, 0, nil
	}
	a := *p.Affinity
	var ahead []*routev3.Route
	if a.SameSite == "None" && a.ConditionalSameSiteNone {
		plain := a
		plain.SameSite = ""
		for _, agent := range sameSiteNoneIncompatible() {
			r := proto.Clone(route).(*routev3.Route)
			r.Match.Headers = append(r.Match.Headers, agent...)
			if err := setSessionCookie(r, &plain, l); err != nil {
				return nil, 0, err
			}
			ahead = append(ahead, r)
		}
	}
	if err := setSessionCookie(route, &a, l); err != nil {
		return nil, 0, err
	}
	return ahead, useStatefulSession, nil
}

// sameSiteNoneIncompatible are the User-Agent matches of the browsers that
// refuse a cookie with SameSite=None, as ingress-nginx's same_site.lua
// tells them (after https://www.chromium.org/updates/same-site/incompatible-clients):
// Chrome 40 to 69 (its "Chrome/4", "/5", "/6"), iOS 12, and Safari (not
// Chrome) on macOS 10.14. Each entry's matches must all hold.
func sameSiteNoneIncompatible() [][]*routev3.HeaderMatcher {
	agent := func(regex string, invert bool) *routev3.HeaderMatcher {
		return &routev3.HeaderMatcher{Name: "user-agent", InvertMatch: invert, HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{
			StringMatch: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: regex}}},
		}}
	}
	return [][]*routev3.HeaderMatcher{
		{agent(`.*(?:Chrome/[456]|CPU iPhone OS 12|iPad; CPU OS 12).*`, false)},
		{agent(`.*Macintosh.*`, false), agent(`.*Intel Mac OS X 10_14.*`, false), agent(`.*Safari.*`, false), agent(`.*Chrome.*`, true)},
	}
}

// setSessionCookie sets a route's stateful session configuration.
func setSessionCookie(route *routev3.Route, a *ir.SessionAffinity, l listenerSide) error {
	cookie := &httptypev3.Cookie{Name: a.Cookie, Path: a.Path, Ttl: durationpb.New(time.Duration(a.MaxAge))}
	attr := func(name, value string) {
		cookie.Attributes = append(cookie.Attributes, &httptypev3.CookieAttribute{Name: name, Value: value})
	}
	if a.Domain != "" {
		attr("Domain", a.Domain)
	}
	if a.SameSite != "" {
		attr("SameSite", a.SameSite)
	}
	if a.Secure || l.tls {
		attr("Secure", "")
	}
	state, err := anypb.New(&cookiev3.CookieBasedSessionState{Cookie: cookie})
	if err != nil {
		return fmt.Errorf("packing the session cookie: %w", err)
	}
	cfg, err := anypb.New(&statefulv3.StatefulSessionPerRoute{Override: &statefulv3.StatefulSessionPerRoute_StatefulSession{
		StatefulSession: &statefulv3.StatefulSession{SessionState: &corev3.TypedExtensionConfig{
			Name: "envoy.http.stateful_session.cookie", TypedConfig: state,
		}},
	}})
	if err != nil {
		return fmt.Errorf("packing the stateful session configuration: %w", err)
	}
	if route.TypedPerFilterConfig == nil {
		route.TypedPerFilterConfig = map[string]*anypb.Any{}
	}
	route.TypedPerFilterConfig[statefulSessionFilter] = cfg
	return nil
}

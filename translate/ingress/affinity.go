package ingress

import (
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's cookie affinity (its sessionaffinity parser and
// balancer/sticky.lua), per route of the Ingress that asks for it: the
// cookie's Path is the path the route comes from, as nginx's location_path,
// unless session-cookie-path gives one.

// defaultAffinityCookie is ingress-nginx's session-cookie-name default.
const defaultAffinityCookie = "INGRESSCOOKIE"

// affinityIntent is what the affinity keys ask; nil: no affinity.
type affinityIntent struct {
	cookie  ir.SessionAffinity // Path empty unless session-cookie-path set it
	pathSet bool
}

// parseAffinity reads the affinity keys; nil: no affinity.
func parseAffinity(values *annotations.Values) *affinityIntent {
	if kind, _ := annotations.Affinity.Get(values); kind != "cookie" {
		return nil
	}
	a := &affinityIntent{cookie: ir.SessionAffinity{Cookie: defaultAffinityCookie}}
	if name, ok := annotations.SessionCookieName.Get(values); ok {
		a.cookie.Cookie = name
	}
	a.cookie.Path, a.pathSet = annotations.SessionCookiePath.Get(values)
	a.cookie.Domain, _ = annotations.SessionCookieDomain.Get(values)
	a.cookie.SameSite, _ = annotations.SessionCookieSameSite.Get(values)
	a.cookie.ConditionalSameSiteNone, _ = annotations.SessionCookieConditionalSameSiteNone.Get(values)
	a.cookie.Secure, _ = annotations.SessionCookieSecure.Get(values)
	// Envoy writes Max-Age only: Expires's seconds give the same lifetime.
	if d, ok := annotations.SessionCookieMaxAge.Get(values); ok {
		a.cookie.MaxAge = ir.Duration(d)
	} else if d, ok := annotations.SessionCookieExpires.Get(values); ok {
		a.cookie.MaxAge = ir.Duration(d)
	}
	return a
}

// applyAffinity gives each route of the Ingress that forwards its cookie
// affinity, with the route's own Path unless one was given. Routes are
// still the builder's own here, not yet shared.
func (f *fragmentBuilder) applyAffinity() {
	a := f.affinity
	if a == nil || f.frag.canary != nil {
		return // a canary's sessions follow its mainline's (canary.go)
	}
	for _, hr := range f.frag.routes {
		// A snippet's routes that forward stick as the path's do.
		for _, route := range append(slices.Clone(hr.variants), hr.route) {
			if route.Action.Forward == nil {
				continue
			}
			p := ir.RoutePolicy{}
			if route.Policy != nil {
				p = *route.Policy
			}
			cookie := a.cookie
			if !a.pathSet {
				cookie.Path = ""
				if validCookiePath(hr.nginx.raw) {
					cookie.Path = hr.nginx.raw
				}
			}
			p.Affinity = &cookie
			route.Policy = &p
		}
	}
}

// validCookiePath reports whether a path may be a cookie's Path as it is.
func validCookiePath(path string) bool {
	return strings.HasPrefix(path, "/") && !strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == ';' || r == 0x7f })
}

package ingress

import (
	"reflect"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The ConfigMap's global-auth-url: ingress-nginx puts its external
// authentication in every location that has no auth-url of its own and
// whose Ingress does not say enable-global-auth "false"
// (internal/ingress/controller/template/template.go,
// shouldApplyGlobalAuth), except the locations whose path starts with one
// of no-auth-locations (isLocationInLocationList). Its keys are those of
// a location's auth-url, so it is parsed as those annotations are, and
// checked as an Ingress's own would be.

// appliesGlobalAuth says whether the global authentication is the
// Ingress's, whose annotations are values: it has none of its own and
// does not opt out. An auth-url of its own that does not parse has
// refused the Ingress already.
func (f *fragmentBuilder) appliesGlobalAuth(values *annotations.Values) bool {
	if f.opts.config.globalAuth() == nil {
		return false
	}
	if _, own := annotations.AuthURL.Get(values); own || annotations.AuthURL.Invalid(values) {
		return false
	}
	enabled, set := annotations.EnableGlobalAuth.Get(values)
	return !set || enabled
}

// globalAuthValues are the global authentication's keys as annotation
// values.
func (f *fragmentBuilder) globalAuthValues() *annotations.Values {
	values, _ := f.reg.ParseWith(nil, f.opts.config.globalAuth())
	return values
}

// exemptFromGlobalAuth is policy without the global authentication when
// the Ingress path raw starts with one of no-auth-locations, as
// ingress-nginx decides it per location by the path the Ingress writes.
func (f *fragmentBuilder) exemptFromGlobalAuth(raw string, policy *ir.RoutePolicy) *ir.RoutePolicy {
	if !f.globalAuth || policy == nil || policy.Auth == nil || policy.Auth.External == nil {
		return policy
	}
	if policy.Auth.Any || policy.Auth.Address != nil {
		// satisfy any decides the address and the authentication
		// together: not taken apart here, so the path keeps both
		// (stricter than nginx, never more open).
		return policy
	}
	for _, loc := range f.opts.config.noAuth() {
		if strings.HasPrefix(raw, loc) {
			p := *policy
			a := *policy.Auth
			a.External = nil
			p.Auth = &a
			if reflect.ValueOf(a).IsZero() {
				p.Auth = nil
			}
			if reflect.ValueOf(p).IsZero() {
				return nil
			}
			return &p
		}
	}
	return policy
}

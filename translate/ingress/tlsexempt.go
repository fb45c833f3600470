package ingress

import (
	"reflect"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// noTLSRedirect are the Ingress paths never redirected to HTTPS
// (no-tls-redirect-locations, ingress-nginx's ACME challenge path by
// default): only with a controller ConfigMap or --nginx-defaults, which
// is when ingress-xds takes ingress-nginx's defaults; none otherwise.
func (c *controllerConfig) noTLSRedirect() []string {
	if c == nil {
		return nil
	}
	return c.settings.NoTLSRedirectLocations() // a ConfigMap not there: the default
}

// exemptFromTLSRedirect is policy without its redirect to HTTPS when the
// Ingress path raw starts with one of the exempt locations. ingress-nginx
// decides it per location, by the path as the Ingress writes it
// (template.go isLocationInLocationList, lua_ingress.lua's
// force_no_ssl_redirect, checked before force-ssl-redirect), so a request
// for /.well-known/acme-challenge/x that only a path / serves is still
// redirected: the exemption is for the challenge's own Ingress path (as
// cert-manager's HTTP-01 solver writes one).
func (f *fragmentBuilder) exemptFromTLSRedirect(raw string, policy *ir.RoutePolicy) *ir.RoutePolicy {
	if policy == nil || policy.HTTPSRedirect == nil {
		return policy
	}
	for _, loc := range f.opts.config.noTLSRedirect() {
		if strings.HasPrefix(raw, loc) {
			p := *policy
			p.HTTPSRedirect = nil
			if reflect.ValueOf(p).IsZero() {
				return nil
			}
			return &p
		}
	}
	return policy
}

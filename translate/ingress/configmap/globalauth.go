package configmap

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// globalAuthAnnotations are the global-auth-* keys and the auth-*
// annotation each stands for: ingress-nginx's GlobalExternalAuth has the
// fields of a location's ExternalAuth, which nginx.tmpl puts in every
// location without one of its own (template.go shouldApplyGlobalAuth).
var globalAuthAnnotations = map[string]string{
	"global-auth-url":                   "auth-url",
	"global-auth-method":                "auth-method",
	"global-auth-signin":                "auth-signin",
	"global-auth-signin-redirect-param": "auth-signin-redirect-param",
	"global-auth-response-headers":      "auth-response-headers",
	"global-auth-request-redirect":      "auth-request-redirect",
	"global-auth-cache-key":             "auth-cache-key",
	"global-auth-cache-duration":        "auth-cache-duration",
	"global-auth-always-set-cookie":     "auth-always-set-cookie",
}

// globalAuth reads a global-auth-* key as the annotation it stands for.
// A value that does not parse would make the check another than the one
// asked for: every Ingress is refused (fail closed), where ingress-nginx
// drops the global authentication with a warning.
func globalAuth(t *Table, s *Settings, name, value string) error {
	if s.globalAuth == nil {
		s.globalAuth = t.reg.NewDefaults()
	}
	if err := s.globalAuth.Set(globalAuthAnnotations[name], value); err != nil {
		s.Defaults.RefuseAll(name, "the global external authentication cannot be applied as written")
		return fmt.Errorf("%v: every Ingress is refused (its paths answer 503) rather than served without the global authentication", err)
	}
	return nil
}

// finishGlobalAuth keeps the global authentication when its URL is set:
// without one, ingress-nginx's other global-auth-* keys do nothing.
func (s *Settings) finishGlobalAuth(reg *annotations.Registry) {
	if s.globalAuth == nil {
		return
	}
	values, _ := reg.ParseWith(nil, s.globalAuth)
	if _, ok := annotations.AuthURL.Get(values); ok {
		s.GlobalAuth = s.globalAuth
	}
}

// DefaultNoAuth is ingress-nginx's no-auth-locations: the ACME HTTP-01
// challenges' paths.
const DefaultNoAuth = "/.well-known/acme-challenge"

// noAuthLocations reads no-auth-locations as noTLSRedirect reads its key.
func noAuthLocations(_ *Table, s *Settings, _, value string) error {
	s.noAuth = locationList(value) // locations.go
	return nil
}

// NoAuthLocations are the Ingress paths the global authentication leaves
// out: no-auth-locations, or ingress-nginx's default when unset.
func (s *Settings) NoAuthLocations() []string {
	if s == nil || s.noAuth == nil {
		return []string{DefaultNoAuth}
	}
	return s.noAuth
}

package configmap

import "strings"

// DefaultNoTLSRedirect is ingress-nginx's no-tls-redirect-locations: the
// paths of ACME HTTP-01 challenges, which a CA fetches over plain HTTP
// while the host has no certificate yet (or an expired one).
const DefaultNoTLSRedirect = "/.well-known/acme-challenge"

// noTLSRedirect reads no-tls-redirect-locations as ingress-nginx's
// isLocationInLocationList does: comma-separated, each trimmed of spaces,
// the empty ones skipped. An empty list exempts nothing.
func noTLSRedirect(_ *Table, s *Settings, _, value string) error {
	s.NoTLSRedirect = locationList(value)
	return nil
}

// locationList reads a list of locations as isLocationInLocationList
// does: comma-separated, each trimmed of spaces, the empty ones skipped;
// never nil, so that an empty list is told apart from an unset key.
func locationList(value string) []string {
	list := []string{}
	for _, item := range strings.Split(value, ",") {
		if item = strings.Trim(item, " "); item != "" {
			list = append(list, item)
		}
	}
	return list
}

// NoTLSRedirectLocations are the Ingress paths whose routes never redirect
// to HTTPS: no-tls-redirect-locations, or ingress-nginx's default when the
// ConfigMap does not set it.
func (s *Settings) NoTLSRedirectLocations() []string {
	if s == nil || s.NoTLSRedirect == nil {
		return []string{DefaultNoTLSRedirect}
	}
	return s.NoTLSRedirect
}

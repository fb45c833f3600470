package togateway

import "strings"

// Why an annotation the converter does not convert has no standard form
// in Gateway API v1 (v1.6, the version ingress-xds builds with). The
// first group whose test matches the name says it.
var notConvertedGroups = []struct {
	matches func(name string) bool
	why     string
}{
	{prefixed("auth-tls-"), "needs a policy: client certificates are the Gateway's frontend TLS validation, not converted yet"},
	{prefixed("auth-", "satisfy", "enable-global-auth", "allowlist-source-range", "whitelist-source-range", "denylist-source-range"),
		"needs a policy: Gateway API v1 has no standard filter for authentication or address rules (ExternalAuth is experimental; implementations use policies)"},
	{prefixed("limit-", "global-rate-limit"), "needs a policy: rate and connection limits have no standard form (an implementation's policy)"},
	{prefixed("affinity", "session-cookie-"), "no standard form: sessionPersistence is experimental in v1.6, and the Gateway API front-end does not read it yet"},
	{prefixed("proxy-read-timeout", "proxy-send-timeout"),
		"no standard form: nginx's bound is on the time between two reads or writes; timeouts.backendRequest bounds the whole response"},
	{prefixed("proxy-connect-timeout", "upstream-keepalive"), "needs a policy: a connection's settings are the backend's (an implementation's policy)"},
	{prefixed("proxy-next-upstream"), "no standard form: HTTPRoute retry is experimental in v1.6"},
	{prefixed("backend-protocol", "proxy-ssl-", "grpc-backend", "secure-backends"),
		"needs a policy: a backend's protocol is its Service port's appProtocol, its TLS a BackendTLSPolicy (which the Gateway API front-end does not read yet)"},
	{prefixed("mirror-"), "no standard form: RequestMirror sends to a Service, mirror-target names a URL"},
	{prefixed("configuration-snippet", "server-snippet", "stream-snippet"), "no standard form: nginx configuration"},
	{prefixed("ssl-passthrough"), "a TLSRoute of a TLS listener in Passthrough mode: not converted yet"},
	{prefixed("default-backend", "custom-http-errors"), "no standard form: error pages from another backend"},
	{prefixed("server-alias"), "not converted yet: more hostnames of the Route (each with its certificate)"},
	{prefixed("from-to-www-redirect"), "not converted yet: a Route of the other name redirecting to this one"},
}

// notConverted says why an annotation is not converted.
func notConverted(name string) string {
	for _, g := range notConvertedGroups {
		if g.matches(name) {
			return g.why
		}
	}
	return "no standard form in Gateway API v1"
}

// prefixed matches names that start with one of the prefixes.
func prefixed(prefixes ...string) func(string) bool {
	return func(name string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
}

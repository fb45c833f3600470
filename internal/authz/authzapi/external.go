package authzapi

import "strings"

// The context extensions of an external (auth-url) check: what
// ingress-nginx's auth location needs, one key per annotation. Values are
// the annotations' text after the front-end's checks; nginx variables in
// them ($host, $request_uri, ...) are expanded by the service, per request.
const (
	// ExternalURL is auth-url: the subrequest's target.
	ExternalURL = "ingress-xds.io/external.url"
	// ExternalMethod is auth-method; empty: GET, and the subrequest then
	// lacks X-Original-URI and X-Scheme, as nginx's.
	ExternalMethod = "ingress-xds.io/external.method"
	// ExternalSignin is auth-signin: where a 401 is redirected.
	ExternalSignin = "ingress-xds.io/external.signin"
	// ExternalSigninParam is auth-signin-redirect-param (default "rd").
	ExternalSigninParam = "ingress-xds.io/external.signin-param"
	// ExternalResponseHeaders is auth-response-headers, comma-separated.
	ExternalResponseHeaders = "ingress-xds.io/external.response-headers"
	// ExternalRequestRedirect is auth-request-redirect: the
	// X-Auth-Request-Redirect header; empty: the request URI.
	ExternalRequestRedirect = "ingress-xds.io/external.request-redirect"
	// ExternalAlwaysSetCookie is "true" for auth-always-set-cookie.
	ExternalAlwaysSetCookie = "ingress-xds.io/external.always-set-cookie"
	// ExternalCacheKey is auth-cache-key; empty: no cache.
	ExternalCacheKey = "ingress-xds.io/external.cache-key"
	// ExternalCacheScope keeps the cache entries of one location apart
	// from another's (nginx prefixes the key with the server name and the
	// location).
	ExternalCacheScope = "ingress-xds.io/external.cache-scope"
	// ExternalCacheDuration is auth-cache-duration: comma-separated
	// "code... time..." groups (nginx's proxy_cache_valid).
	ExternalCacheDuration = "ingress-xds.io/external.cache-duration"
	// ExternalProxySetHeaders is auth-proxy-set-headers' ConfigMap: lines
	// "Name: value", sorted, set on the subrequest.
	ExternalProxySetHeaders = "ingress-xds.io/external.proxy-set-headers"
	// ExternalUpstreamHeaders are headers set on the upstream request
	// from the auth service's answer: JSON, a list of UpstreamHeader.
	ExternalUpstreamHeaders = "ingress-xds.io/external.upstream-headers"
)

// UpstreamHeader is a header set on the upstream request after a 2xx
// answer, from text and the answer's headers (Parts: [text, answer
// header name], one of them empty); removed when it comes out empty.
type UpstreamHeader struct {
	Name  string      `json:"name"`
	Parts [][2]string `json:"parts"`
}

// DefaultCacheDuration is ingress-nginx's auth-cache-duration default.
const DefaultCacheDuration = "200 202 401 5m"

// Variables lists the nginx variables in s, "$name" or "${name}", in
// order, without the dollar sign. A "$" followed by no name is not a
// variable (nginx rejects it; the front-end reports it).
func Variables(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		name, n := VariableAt(s[i:])
		if n > 0 {
			out = append(out, name)
			i += n - 1
		}
	}
	return out
}

// VariableAt reads the variable s begins with ("$name" or "${name}"): its
// name and the length of its text, 0 when s does not begin with one.
func VariableAt(s string) (name string, n int) {
	if len(s) < 2 || s[0] != '$' {
		return "", 0
	}
	if s[1] == '{' {
		end := strings.IndexByte(s, '}')
		if end < 3 || !isName(s[2:end]) {
			return "", 0
		}
		return s[2:end], end + 1
	}
	j := 1
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	if j == 1 {
		return "", 0
	}
	return s[1:j], j
}

func isName(s string) bool {
	for i := range len(s) {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return s != ""
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// KnownVariable says whether the service expands the nginx variable name:
// those ingress-nginx's users put in auth-url, auth-signin, auth-cache-key
// and auth-proxy-set-headers. Others (ingress-nginx's own $namespace,
// $service_name, ...) are the front-end's problem, never silently empty.
func KnownVariable(name string) bool {
	switch name {
	case "host", "http_host", "best_http_host", "scheme", "pass_access_scheme",
		"request_uri", "escaped_request_uri", "uri", "args", "query_string",
		"request_method", "remote_addr", "remote_user", "request_id", "req_id":
		return true
	}
	for _, prefix := range []string{"http_", "arg_", "cookie_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" {
			return true
		}
	}
	return false
}

// ExternalCookieHeader is the response header under which the service
// hands an allowed request's cookies from the auth service to Envoy, when
// they are to reach the client only on success answers (no
// auth-always-set-cookie): the renderer's auth cookie filter makes them
// Set-Cookie on those statuses and drops them on the others.
const ExternalCookieHeader = "x-ingress-xds-auth-cookie"

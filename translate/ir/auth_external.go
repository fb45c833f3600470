package ir

import (
	"fmt"
	"net/url"
	"strings"
)

// ExternalAuth asks an HTTP auth service before each request, with nginx's
// auth_request semantics (ingress-nginx's auth-url): the authorisation
// service beside Envoy makes the subrequest. Text fields may hold nginx
// variables ($host, $request_uri, ...), which the service expands per
// request; the front-end admits only those it knows.
type ExternalAuth struct {
	// URL is the subrequest's target, http or https.
	URL string `json:"url"`
	// Method is the subrequest's; empty: GET (and, as nginx, no
	// X-Original-URI nor X-Scheme).
	Method string `json:"method,omitempty"`
	// Signin, when set, is where a 401 is redirected, with the original
	// URL in the SigninParam parameter ("rd" when empty).
	Signin      string `json:"signin,omitempty"`
	SigninParam string `json:"signinParam,omitempty"`
	// ResponseHeaders are copied from a 2xx answer onto the upstream
	// request, and removed from it when the answer lacks them.
	ResponseHeaders []string `json:"responseHeaders,omitempty"`
	// RequestRedirect is the X-Auth-Request-Redirect header; empty: the
	// request URI.
	RequestRedirect string `json:"requestRedirect,omitempty"`
	// AlwaysSetCookie passes the answer's cookies on error answers too.
	AlwaysSetCookie bool `json:"alwaysSetCookie,omitempty"`
	// CacheKey, when set, caches answers under it for CacheDuration
	// (nginx's proxy_cache_valid groups; empty: ingress-nginx's default).
	CacheKey      string `json:"cacheKey,omitempty"`
	CacheDuration string `json:"cacheDuration,omitempty"`
	// ProxySetHeaders are set on the subrequest, sorted by name.
	ProxySetHeaders []Header `json:"proxySetHeaders,omitempty"`
	// UpstreamHeaders are set on the upstream request after a 2xx
	// answer, each made of text and the answer's headers (nginx's
	// auth_request_set variables in a proxy_set_header); one that comes
	// out empty is removed from the request instead, so that a client's
	// own never reaches the backend.
	UpstreamHeaders []AuthHeader `json:"upstreamHeaders,omitempty"`
}

// AuthHeader is a header made from the auth service's answer.
type AuthHeader struct {
	Name  string          `json:"name"`
	Parts []AuthValuePart `json:"parts"`
}

// AuthValuePart is text, or the value of a header of the auth service's
// answer (FromAnswer, its name; empty when the answer has none).
type AuthValuePart struct {
	Text       string `json:"text,omitempty"`
	FromAnswer string `json:"fromAnswer,omitempty"`
}

func (e *ExternalAuth) validate() []error {
	var v violations
	bad := func(field string, kind error, format string, args ...any) {
		v.add(field, kind, "external auth: "+format, args...)
	}
	u, err := url.Parse(strings.ReplaceAll(e.URL, "$", "_"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		bad("URL", ErrBadPath, "url %q is not an http or https URL with a host and without userinfo", e.URL)
	}
	for _, f := range []struct{ field, what, s string }{
		{"URL", "url", e.URL}, {"Method", "method", e.Method}, {"Signin", "signin", e.Signin}, {"SigninParam", "signin parameter", e.SigninParam},
		{"RequestRedirect", "request redirect", e.RequestRedirect}, {"CacheKey", "cache key", e.CacheKey}, {"CacheDuration", "cache duration", e.CacheDuration},
	} {
		if hasControl(f.s) {
			bad(f.field, ErrBadHeader, "%s %q holds a control character", f.what, f.s)
		}
	}
	if strings.ContainsAny(e.SigninParam, "&=?# ") {
		bad("SigninParam", ErrBadName, "signin parameter %q is not a parameter name", e.SigninParam)
	}
	if e.CacheDuration != "" && e.CacheKey == "" {
		bad("CacheDuration", ErrConflict, "a cache duration without a cache key")
	}
	for i, h := range e.ResponseHeaders {
		if err := validHeaderName(h); err != nil || strings.HasPrefix(h, ":") {
			bad(fmt.Sprintf("ResponseHeaders[%d]", i), ErrBadHeader, "response header %q is not a header name", h)
		}
	}
	for i, h := range e.ProxySetHeaders {
		field := fmt.Sprintf("ProxySetHeaders[%d]", i)
		if validHeaderName(h.Name) != nil || strings.HasPrefix(h.Name, ":") || hasControl(h.Value) || strings.Contains(h.Value, "\n") {
			bad(field, ErrBadHeader, "proxy-set header %q: %q cannot be sent", h.Name, h.Value)
		}
		if i > 0 && e.ProxySetHeaders[i-1].Name >= h.Name {
			kind := ErrUnsorted
			if e.ProxySetHeaders[i-1].Name == h.Name {
				kind = ErrDuplicate
			}
			bad(field+".Name", kind, "proxy-set headers not sorted, or %q twice", h.Name)
		}
	}
	for i, h := range e.UpstreamHeaders {
		field := fmt.Sprintf("UpstreamHeaders[%d]", i)
		if validHeaderName(h.Name) != nil || strings.HasPrefix(h.Name, ":") || len(h.Parts) == 0 {
			bad(field, ErrBadHeader, "upstream header %q is not a header name with a value", h.Name)
		}
		for j, p := range h.Parts {
			if hasControl(p.Text) || p.FromAnswer != "" && (p.Text != "" || validHeaderName(p.FromAnswer) != nil || strings.HasPrefix(p.FromAnswer, ":")) {
				bad(fmt.Sprintf("%s.Parts[%d]", field, j), ErrBadHeader, "upstream header %q: part %+v", h.Name, p)
			}
		}
	}
	return v.errors()
}

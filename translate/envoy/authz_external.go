package envoy

import (
	"encoding/json"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// externalAuthz writes an external (auth-url) check's context extensions:
// the annotations' values, which the service reads back (authzapi names
// them). Empty values are left out.
func externalAuthz(ext map[string]string, e *ir.ExternalAuth) {
	set := func(key, value string) {
		if value != "" {
			ext[key] = value
		}
	}
	set(authzapi.ExternalURL, e.URL)
	set(authzapi.ExternalMethod, e.Method)
	set(authzapi.ExternalSignin, e.Signin)
	set(authzapi.ExternalSigninParam, e.SigninParam)
	set(authzapi.ExternalResponseHeaders, strings.Join(e.ResponseHeaders, ","))
	set(authzapi.ExternalRequestRedirect, e.RequestRedirect)
	if e.AlwaysSetCookie {
		ext[authzapi.ExternalAlwaysSetCookie] = "true"
	}
	set(authzapi.ExternalCacheKey, e.CacheKey)
	set(authzapi.ExternalCacheDuration, e.CacheDuration)
	if len(e.ProxySetHeaders) > 0 {
		lines := make([]string, len(e.ProxySetHeaders))
		for i, h := range e.ProxySetHeaders {
			lines[i] = h.Name + ": " + h.Value
		}
		ext[authzapi.ExternalProxySetHeaders] = strings.Join(lines, "\n")
	}
	if len(e.UpstreamHeaders) > 0 {
		hs := make([]authzapi.UpstreamHeader, len(e.UpstreamHeaders))
		for i, h := range e.UpstreamHeaders {
			hs[i].Name = h.Name
			for _, p := range h.Parts {
				hs[i].Parts = append(hs[i].Parts, [2]string{p.Text, p.FromAnswer})
			}
		}
		b, _ := json.Marshal(hs) // strings alone: cannot fail
		ext[authzapi.ExternalUpstreamHeaders] = string(b)
	}
}

// withCacheScope keeps a route's cached auth answers apart from another
// route's, as nginx keys its auth cache by server and location: the scope
// is the route's path match (the service adds the request's host).
func withCacheScope(cfg *extauthzv3.ExtAuthzPerRoute, a *ir.Auth, route *routev3.Route) {
	if a.External == nil || a.External.CacheKey == "" {
		return
	}
	var scope string
	switch m := route.GetMatch(); {
	case m.GetPrefix() != "":
		scope = "prefix " + m.GetPrefix()
	case m.GetPath() != "":
		scope = "exact " + m.GetPath()
	case m.GetPathSeparatedPrefix() != "":
		scope = "segments " + m.GetPathSeparatedPrefix()
	case m.GetSafeRegex() != nil:
		scope = "regex " + m.GetSafeRegex().GetRegex()
	}
	cfg.GetCheckSettings().GetContextExtensions()[authzapi.ExternalCacheScope] = scope
}

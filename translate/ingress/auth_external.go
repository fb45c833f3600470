package ingress

import (
	"cmp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// externalAuthKeys are the keys that shape auth-url's check. A value of
// one of them that does not parse refuses the Ingress: ingress-nginx
// denies the location for most of them, and a check that is not the one
// asked for must not stand in for it.
var externalAuthKeys = []interface {
	Name() string
	Invalid(*annotations.Values) bool
}{
	annotations.AuthMethod, annotations.AuthSignin, annotations.AuthSigninRedirectParam, annotations.AuthResponseHeaders,
	annotations.AuthRequestRedirect, annotations.AuthAlwaysSetCookie, annotations.AuthCacheKey, annotations.AuthCacheDuration,
	annotations.AuthProxySetHeaders,
}

// parseExternalAuth reads ingress-nginx's external authentication
// (auth-url and the keys that shape it): the check, nil for none.
func parseExternalAuth(values *annotations.Values, env groupEnv) (*ir.ExternalAuth, []problem) {
	authURL, ok := annotations.AuthURL.Get(values)
	if !ok {
		// Without auth-url, ingress-nginx has no external auth and the
		// other keys do nothing (an auth-url that does not parse has
		// refused the Ingress already).
		return nil, nil
	}
	for _, k := range externalAuthKeys {
		if k.Invalid(values) {
			return nil, []problem{refusal(k.Name(), "its value cannot be used, and it shapes the auth-url check")}
		}
	}
	if hostVariable(authURL) {
		if where := hostNotExact(env.ing); where != "" {
			return nil, []problem{refusal(annotations.AuthURL.Name(), "its host is $host, and %s: the client would choose where the authorisation service connects", where)}
		}
	}
	e := &ir.ExternalAuth{URL: authURL}
	e.Method, _ = annotations.AuthMethod.Get(values)
	e.Signin, _ = annotations.AuthSignin.Get(values)
	e.SigninParam, _ = annotations.AuthSigninRedirectParam.Get(values)
	e.ResponseHeaders, _ = annotations.AuthResponseHeaders.Get(values)
	e.RequestRedirect, _ = annotations.AuthRequestRedirect.Get(values)
	e.AlwaysSetCookie, _ = annotations.AuthAlwaysSetCookie.Get(values)
	if key, ok := annotations.AuthCacheKey.Get(values); ok {
		e.CacheKey = key
		e.CacheDuration, _ = annotations.AuthCacheDuration.Get(values)
	}
	if name, ok := annotations.AuthProxySetHeaders.Get(values); ok {
		headers, refused := authProxySetHeaders(name, env)
		if refused != nil {
			return nil, []problem{*refused}
		}
		e.ProxySetHeaders = headers
	}
	return e, nil
}

// hostVariable says whether an auth-url's host is the request's ($host).
func hostVariable(u string) bool {
	_, rest, _ := strings.Cut(u, "://")
	return strings.HasPrefix(rest, "$")
}

// hostNotExact says why a rule of the Ingress does not pin the request's
// host ("" when every one does): a wildcard, no host, or a default
// backend.
func hostNotExact(ing *networkingv1.Ingress) string {
	if ing.Spec.DefaultBackend != nil {
		return "the Ingress has a default backend, which any host reaches"
	}
	for _, r := range ing.Spec.Rules {
		if r.Host == "" {
			return "a rule has no host"
		}
		if strings.HasPrefix(r.Host, "*") {
			return "rule host " + r.Host + " is a wildcard"
		}
	}
	return ""
}

// authProxySetHeaders reads auth-proxy-set-headers' ConfigMap: every key a
// header name, every value one that can be sent with the variables the
// service expands. Anything else refuses the Ingress (ingress-nginx denies
// the location): the refusal is returned.
func authProxySetHeaders(name string, env groupEnv) ([]ir.Header, *problem) {
	key := annotations.AuthProxySetHeaders.Name()
	refuse := func(format string, args ...any) ([]ir.Header, *problem) {
		r := refusal(key, format, args...)
		return nil, &r
	}
	ns, n, _ := strings.Cut(name, "/")
	if ns != env.ing.Namespace {
		return refuse("ConfigMap %s is of another namespace than the Ingress's", name)
	}
	cm := env.objects.configMap(types.NamespacedName{Namespace: ns, Name: n})
	if cm == nil {
		return refuse("ConfigMap %s does not exist", name)
	}
	var out []ir.Header
	for h, v := range cm.Data {
		if !annotations.ValidHeaderName(h) {
			return refuse("ConfigMap %s: key %q is not a header name", name, h)
		}
		if bad := badHeaderValue(v); bad != "" {
			return refuse("ConfigMap %s: the value of %s %s", name, h, bad)
		}
		out = append(out, ir.Header{Name: h, Value: v})
	}
	slices.SortFunc(out, func(a, b ir.Header) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// badHeaderValue says what keeps v from being a header value the service
// can expand and send ("" when nothing does).
func badHeaderValue(v string) string {
	if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return "holds a control character"
	}
	for _, name := range authzapi.Variables(v) {
		if !authzapi.KnownVariable(name) {
			return "holds nginx variable $" + name + ", which ingress-xds does not expand"
		}
	}
	return ""
}

package translate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// controllerConfigMap is the controller ConfigMap goldenOptions names,
// with data (YAML flow mapping entries).
func controllerConfigMap(data string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ingress-nginx-controller, namespace: ingress-nginx}\ndata: {%s}\n", data)
}

// configMapBadInputCases are the rows of docs/bad-input.md for the
// controller ConfigMap (serve --configmap): a value that does not parse, a
// key not honoured or unknown, is a Warning on the ConfigMap and treated as
// unset, so that every Ingress (the good one included) is served as
// without it.
func configMapBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	bad := badService + ingress("bad", rule)
	return []badInputCase{
		{name: "configmap-value-unparsable", reason: "InvalidConfigMapValue",
			manifests: bad + controllerConfigMap(`proxy-body-size: "1q", proxy-read-timeout: "soon", ssl-redirect: "maybe", hsts: "yes", hsts-max-age: "1e9", http-redirect-code: "303", limit-req-status-code: "200", annotations-risk-level: "Extreme", gzip-level: "10", retry-non-idempotent: "sometimes", enable-brotli: "maybe", brotli-level: "12", brotli-types: "text"`),
			check:     plainRoute("bad.example.com")},
		{name: "configmap-key-unknown", reason: "UnknownConfigMapKey",
			manifests: bad + controllerConfigMap(`proxy-bdy-size: "1k", "bad key\n": x`),
			check:     plainRoute("bad.example.com")},
		{name: "configmap-key-not-honoured", reason: "UnsupportedConfigMapKey",
			manifests: bad + controllerConfigMap(`enable-ocsp: "true", gzip-disable: "msie6"`),
			check:     plainRoute("bad.example.com")},
		{name: "configmap-connection-value-unparsable", reason: "InvalidConfigMapValue",
			manifests: bad + controllerConfigMap(connectionBadValues),
			check:     connectionKeysUnset("bad.example.com")},
		{name: "ssl-ciphers-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/ssl-ciphers: "HIGH:!aNULL:DHE-RSA-AES128-GCM-SHA256"`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "configmap-header-maps-missing", reason: "ConfigMapNotFound",
			manifests: bad + controllerConfigMap(`add-headers: "ingress-nginx/missing", proxy-set-headers: "just-a-name"`),
			check:     plainRoute("bad.example.com")},
		{name: "configmap-header-maps-hostile", reason: "InvalidConfigMapValue",
			manifests: bad + controllerConfigMap(`add-headers: "ingress-nginx/response", proxy-set-headers: "ingress-nginx/request"`) +
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: response, namespace: ingress-nginx}\ndata: {X-Ok: fine, X-Evil: \"a\\r\\nSet-Cookie: x\"}\n" +
				"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: request, namespace: ingress-nginx}\ndata: {X-Ok: fine, X-Nul: \"a\\u0000b\", X-Pick: \"$http_x_upstream\", Host: evil.example}\n",
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				plainRoute("bad.example.com")(t, res)
				for _, rc := range res.Resources.Routes {
					if len(rc.ResponseHeadersToAdd) > 0 {
						t.Errorf("route configuration %s carries headers of a ConfigMap not applied whole: %v", rc.GetName(), rc.ResponseHeadersToAdd)
					}
				}
				if vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com"); strings.Contains(vh.String(), "X-Ok") || strings.Contains(vh.String(), "X-Pick") {
					t.Errorf("the route carries a header of a ConfigMap not applied whole: %v", vh)
				}
			}},
		{name: "configmap-value-huge", reason: "InvalidConfigMapValue",
			manifests: bad + controllerConfigMap(`proxy-body-size: "`+strings.Repeat("9", 5000)+`"`),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				plainRoute("bad.example.com")(t, res)
				for _, p := range res.Problems {
					if p.Kind == "ConfigMap" && len(p.Message) > 1100 {
						t.Errorf("a problem of %d bytes: messages are bounded", len(p.Message))
					}
				}
			}},
	}
}

// A global access control that cannot be applied fails closed: every
// Ingress it would apply to is refused (its paths answer 503), never
// served open; an Ingress with its own valid range is served. This is the
// one ConfigMap input that changes other Ingresses, by design, so it is
// not a row of TestBadInput (whose promise is that it never does).
func TestConfigMapAccessControlFailsClosed(t *testing.T) {
	rule := func(host string) string { return simpleRule(host, "/", "Prefix", "bad", "{number: 80}") }
	base := badService + ingress("open", rule("open.example.com")) +
		annotated("ranged", `nginx.ingress.kubernetes.io/allowlist-source-range: "10.0.0.0/8"`, rule("ranged.example.com"))
	for _, tc := range []struct{ name, data string }{
		{"whitelist-source-range unparsable", `whitelist-source-range: "10.0.0.0/33"`},
		{"block-cidrs unparsable", `block-cidrs: "10.0.0.0/8, nonsense"`},
		{"block-user-agents RE2 cannot take", `block-user-agents: "AlphaBot, ~(?<!Chrome)Safari"`},
		{"block-referers nginx would reject", `block-referers: "bad referer"`},
		{"a snippet not translated whole", `server-snippet: "allow 10.0.0.0/8; deny all; mirror /copy;"`},
		{"global-auth-url that cannot be used", `global-auth-url: "http://localhost/verify"`},
		{"global-auth-method that cannot be used", `global-auth-url: "http://auth.example.com/verify", global-auth-method: "GET POST"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := translateManifests(t, base+controllerConfigMap(tc.data))
			routeAnswers("open.example.com", 503)(t, res)
			refused := !strings.HasPrefix(tc.name, "whitelist")
			if refused {
				routeAnswers("ranged.example.com", 503)(t, res)
			} else if vh := vhostNamed(res, frontend.HTTPListenerName, "ranged.example.com"); vh.GetRoutes()[0].GetDirectResponse() != nil {
				t.Errorf("ranged.example.com, with its own range, is not served: %v", vh.GetRoutes()[0])
			}
		})
	}
}

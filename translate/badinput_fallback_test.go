package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// badService2 is a second Service of the bad Ingresses' namespace, their
// default backend.
const badService2 = "apiVersion: v1\nkind: Service\nmetadata: {name: bad2, namespace: default}\nspec: {ports: [{name: http, port: 80}]}\n---\n"

// fallbackBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// default-backend: a value ingress-nginx would not apply, or a Service it
// could not fall back to, is reported and not applied, and the route sends
// to its own Service's cluster alone (no aggregate).
func fallbackBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	external := "apiVersion: v1\nkind: Service\nmetadata: {name: elsewhere, namespace: default}\nspec: {type: ExternalName, externalName: errors.example.net}\n---\n"
	return []badInputCase{
		{name: "default-backend-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: "kube-system/errors"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/default-backend: "Errors_Page\r\nX-Injected: 1"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				plainRoute("bad.example.com")(t, res)
				plainRoute("bad2.example.com")(t, res)
			}},
		{name: "custom-http-errors-unparsable", reason: "InvalidAnnotation",
			manifests: badService + badService2 + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: bad2, nginx.ingress.kubernetes.io/custom-http-errors: "404,600"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/default-backend: bad2, nginx.ingress.kubernetes.io/custom-http-errors: "404,abc", nginx.ingress.kubernetes.io/disable-proxy-intercept-errors: "maybe"`,
					simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				for _, host := range []string{"bad.example.com", "bad2.example.com"} {
					vh := vhostNamed(res, frontend.HTTPListenerName, host)
					if vh == nil || len(vh.GetRoutes()) != 1 || len(vh.GetRoutes()[0].TypedPerFilterConfig) != 0 {
						t.Errorf("%s: error pages applied from codes that do not parse: %v", host, vh)
					}
				}
			}},
		{name: "default-backend-missing", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: nosuch`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "default-backend-external-name", reason: "InvalidAnnotation",
			manifests: badService + external + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: elsewhere`, rule),
			check:     plainRoute("bad.example.com")},
	}
}

package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// redirectBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// redirect keys: a target or code ingress-nginx would not apply is reported
// and not applied, and the rest of the Ingress is served as without it.
func redirectBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	return []badInputCase{
		{name: "redirect-url-refused", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/permanent-redirect: "ftp://files.example.com", nginx.ingress.kubernetes.io/temporal-redirect: "http://user@evil.example/"`, rule),
			check:     routeForwards("bad.example.com")},
		{name: "redirect-url-header-injection", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/permanent-redirect: "http://a.example/\r\nX-Injected: 1"`, rule),
			check:     routeForwards("bad.example.com")},
		{name: "redirect-code-unsupported", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/permanent-redirect: "https://new.example/", nginx.ingress.kubernetes.io/permanent-redirect-code: "306"`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				route := vh.GetRoutes()[0]
				if got := route.GetDirectResponse().GetStatus(); got != 301 || route.GetResponseHeadersToAdd()[0].GetHeader().GetValue() != "https://new.example/" {
					t.Errorf("code 306: the route answers %d (%v), want the default 301 to https://new.example/", got, route)
				}
			}},
		{name: "app-root-absolute-url", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/app-root: "http://evil.example/app"`, rule),
			check:     routeForwards("bad.example.com")},
		{name: "from-to-www-name-taken", reason: "RedirectConflict",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/from-to-www-redirect: "true"`, rule) +
				ingress("www", simpleRule("www.bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: routeForwards("www.bad.example.com")},
	}
}

package translate_test

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// canaryBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// canary keys. The bad Ingress is the canary of bad-main's
// canary.example.com/: a value ingress-nginx would not apply is reported
// and not applied, and the mainline is served as without it.
func canaryBadInputCases() []badInputCase {
	main := ingress("bad-main", simpleRule("canary.example.com", "/", "Prefix", "bad", "{number: 80}"))
	canaryService := "apiVersion: v1\nkind: Service\nmetadata: {name: bad-canary, namespace: default}\nspec: {ports: [{name: http, port: 80}]}\n---\n"
	rule := simpleRule("canary.example.com", "/", "Prefix", "bad-canary", "{number: 80}")
	base := badService + canaryService + main
	return []badInputCase{
		{name: "canary-value-unparsable", reason: "InvalidAnnotation",
			manifests: base + annotated("bad", `nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "-5", `+
				`nginx.ingress.kubernetes.io/canary-weight-total: "lots", nginx.ingress.kubernetes.io/canary-by-header: "X Canary:", `+
				`nginx.ingress.kubernetes.io/canary-by-cookie: "a\r\nSet-Cookie: evil=1"`, rule),
			check: mainlineOnly("canary.example.com")},
		{name: "canary-pattern-re2-refuses", reason: "InvalidAnnotation",
			manifests: base + annotated("bad", `nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: X-Canary, `+
				`nginx.ingress.kubernetes.io/canary-by-header-pattern: "^(?=Do)"`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "canary.example.com")
				for _, r := range vh.GetRoutes() {
					for _, h := range r.GetMatch().GetHeaders() {
						if h.GetStringMatch().GetSafeRegex() != nil {
							t.Errorf("the refused pattern was applied: %v", r)
						}
					}
				}
				if len(vh.GetRoutes()) != 3 {
					t.Errorf("%d routes, want the header's always and never routes ahead of the mainline: %v", len(vh.GetRoutes()), vh)
				}
			}},
		{name: "canary-without-mainline", reason: "CanaryWithoutMainline",
			manifests: badService + canaryService + annotated("bad", `nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "100"`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				if vh := vhostNamed(res, frontend.HTTPListenerName, "canary.example.com"); vh != nil {
					t.Errorf("a canary with no mainline made a host: %v", vh)
				}
			}},
		{name: "canary-keys-without-canary", reason: "CanaryNotEnabled",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/canary-by-header: X-Canary, nginx.ingress.kubernetes.io/canary-weight: "50"`,
				simpleRule("canary.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: mainlineOnly("canary.example.com")},
	}
}

// mainlineOnly checks that host's one route forwards to default/bad/80
// alone, with no header match.
func mainlineOnly(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 {
			t.Fatalf("%s is not served by one route: %v", host, vh)
		}
		route := vh.GetRoutes()[0]
		if route.GetRoute().GetCluster() != "default/bad/80" || len(route.GetMatch().GetHeaders()) != 0 {
			t.Errorf("%s: a canary value that does not parse was applied: %v", host, route)
		}
		if strings.Contains(route.String(), "evil") {
			t.Errorf("%s: the injected cookie reached the configuration: %v", host, route)
		}
	}
}

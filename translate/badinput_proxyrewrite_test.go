package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// proxyRewriteBadInputCases are the rows of docs/bad-input.md for
// proxy-redirect-from/-to and proxy-cookie-domain/-path: a value
// ingress-nginx's checks refuse is reported and not applied (nothing of it
// reaches a response header), and the route is served as without it.
func proxyRewriteBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	return []badInputCase{
		{name: "proxy-rewrite-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-redirect-from: "http://internal/\r\nX-Injected: 1", nginx.ingress.kubernetes.io/proxy-redirect-to: "https://$host/", `+
				`nginx.ingress.kubernetes.io/proxy-cookie-domain: "localhost example.org; HttpOnly", nginx.ingress.kubernetes.io/proxy-cookie-path: "/one/"`, rule),
			check: noResponseRewrite("bad.example.com")},
		{name: "proxy-rewrite-regex", reason: "UnsupportedAnnotationValue",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-redirect-from: "~http://internal/", nginx.ingress.kubernetes.io/proxy-redirect-to: "https://example.org/", `+
				`nginx.ingress.kubernetes.io/proxy-cookie-path: "~/one/ /"`, rule),
			check: noResponseRewrite("bad.example.com")},
	}
}

// noResponseRewrite checks that host's one route forwards with no
// per-route filter configuration: no response rewrite.
func noResponseRewrite(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
			t.Fatalf("%s is not forwarded to its Service: %v", host, vh)
		}
		if per := vh.GetRoutes()[0].TypedPerFilterConfig; len(per) != 0 {
			t.Errorf("%s: a value that does not parse was applied: %v", host, per)
		}
	}
}

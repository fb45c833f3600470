package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// refusalBadInputCases are the rows of docs/bad-input.md for access
// controls ingress-xds cannot apply (translate/ingress/refuse.go).
func refusalBadInputCases() []badInputCase {
	return []badInputCase{
		{name: "snippet-refused", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/configuration-snippet: "allow 10.0.0.0/8;\r\ndeny all;\u0000"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "modsecurity-refused", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/enable-modsecurity: "true", nginx.ingress.kubernetes.io/modsecurity-snippet: "SecRuleEngine On"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		// The refused Ingress's /admin answers 503 where the other
		// Ingress's / would otherwise serve it.
		{name: "refused-path-no-fall-through", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/server-snippet: "location /admin { allow 10.0.0.1; deny all; }"`, simpleRule("bad.example.com", "/admin", "Prefix", "bad", "{number: 80}")) +
				"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: open, namespace: default}\nspec:\n" + simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}") + "\n---\n",
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				routes := vh.GetRoutes()
				if len(routes) != 2 || routes[0].GetMatch().GetPathSeparatedPrefix() != "/admin" || routes[0].GetDirectResponse().GetStatus() != 503 ||
					routes[1].GetRoute().GetCluster() == "" {
					t.Errorf("routes %v: want /admin answering 503 ahead of / forwarded", routes)
				}
			}},
	}
}

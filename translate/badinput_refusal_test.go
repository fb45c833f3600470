package translate_test

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// refusalBadInputCases are the rows of docs/bad-input.md for access
// controls ingress-xds cannot apply (translate/ingress/refuse.go).
func refusalBadInputCases() []badInputCase {
	huge := strings.Repeat("A", 200<<10)
	return []badInputCase{
		// The largest value the API server takes (annotations: 256 KiB in
		// all): reported with a bounded message, the rest served.
		{name: "annotation-value-huge", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-read-timeout: "`+huge+`"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				routeForwards("bad.example.com")(t, res)
				problemsBounded(t, res)
			}},
		{name: "snippet-huge", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/server-snippet: "`+huge+`"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				routeAnswers("bad.example.com", 503)(t, res)
				problemsBounded(t, res)
			}},
		// A refused canary adds nothing: its mainline sends to its own
		// Service alone.
		{name: "refused-canary", reason: "AnnotationRefused",
			manifests: badService + "apiVersion: v1\nkind: Service\nmetadata: {name: canary, namespace: default}\nspec: {ports: [{name: http, port: 80}]}\n---\n" +
				"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: main, namespace: default}\nspec:\n" + simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}") + "\n---\n" +
				annotated("bad", `nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-weight: "100", nginx.ingress.kubernetes.io/configuration-snippet: "mirror /copy;"`, simpleRule("bad.example.com", "/", "Prefix", "canary", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				if len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() != "default/bad/80" {
					t.Errorf("routes %v: want the mainline's alone, to default/bad/80", vh.GetRoutes())
				}
			}},
		// Its default backend is one of its paths: the catch-all answers
		// 503 rather than another Ingress's default backend serving it.
		{name: "refused-default-backend", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/enable-modsecurity: "true"`, "  defaultBackend: {service: {name: bad, port: {number: 80}}}"),
			check:     routeAnswers("*", 503)},
		{name: "snippet-refused", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/configuration-snippet: "allow 10.0.0.0/8;\r\ndeny all;\u0000"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		// A snippet is parsed as nginx parses it and translated whole or
		// not at all: what nginx would refuse, and what is not translated,
		// refuses the Ingress; nothing of the text reaches Envoy.
		{name: "snippet-unbalanced", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/configuration-snippet: "if ($http_x = \"1) { return 403; }"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "snippet-deep", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/server-snippet: "`+strings.Repeat("location ~ a { ", 20)+strings.Repeat("} ", 20)+`"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "snippet-client-upstream", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/configuration-snippet: "set $target $http_x_target; proxy_pass http://$target;"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "snippet-header-value-crlf", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/configuration-snippet: "more_set_headers \"X-A: 1\\r\\nX-Injected: 1\";"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
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

// problemsBounded checks that no problem quotes a huge value whole.
func problemsBounded(t *testing.T, res *translate.Result) {
	t.Helper()
	for _, p := range res.Problems {
		if len(p.Message) > 2048 {
			t.Errorf("a problem of %d bytes: %.100s...", len(p.Message), p.Message)
		}
	}
}

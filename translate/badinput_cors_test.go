package translate_test

import (
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/ingress-xds/ingress-xds/translate"
	renderer "github.com/ingress-xds/ingress-xds/translate/envoy"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// corsBadInputCases are the rows of docs/bad-input.md for the CORS keys
// and custom-headers: a restriction that does not parse refuses the
// Ingress (fail closed, where ingress-nginx would fall back to its
// default, "*" for the origins); whatever ingress-nginx denies a location
// for in custom-headers makes the routes answer 503, as there. No value
// ever reaches a header as written when it holds CR, LF or NUL.
func corsBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	cors := func(more string) string {
		return `nginx.ingress.kubernetes.io/enable-cors: "true", ` + more
	}
	configMap := func(name, ns, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + ", namespace: " + ns + "}\ndata: {" + data + "}\n---\n"
	}
	headers := func(name string) string { return `nginx.ingress.kubernetes.io/custom-headers: "` + name + `"` }
	return []badInputCase{
		{name: "cors-origin-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", cors(`nginx.ingress.kubernetes.io/cors-allow-origin: "https://app.example.com/path, HTTPS://UPPER.example.com"`), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "cors-values-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", cors(`nginx.ingress.kubernetes.io/cors-allow-methods: "GET;DELETE", `+
				`nginx.ingress.kubernetes.io/cors-allow-headers: "X-A\r\nSet-Cookie: a=b", nginx.ingress.kubernetes.io/cors-expose-headers: "X-A: 1\u0000", `+
				`nginx.ingress.kubernetes.io/cors-allow-credentials: "maybe"`), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				routeAnswers("bad.example.com", 503)(t, res)
				noHostileHeader(t, res)
			}},
		{name: "cors-origin-without-scheme", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", cors(`nginx.ingress.kubernetes.io/cors-allow-origin: "origin.example.com:8080, https://app.example.com"`), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				// The preflight and the allowed origin's routes, then the
				// route as without CORS.
				if routes := vh.GetRoutes(); len(routes) != 3 || !strings.Contains(routes[1].GetMatch().GetHeaders()[0].GetStringMatch().GetSafeRegex().GetRegex(), `https://app\.example\.com`) ||
					strings.Contains(routes[1].GetMatch().GetHeaders()[0].GetStringMatch().GetSafeRegex().GetRegex(), "origin") {
					t.Errorf("the other origin is not allowed alone: %v", vh)
				}
			}},
		{name: "cors-max-age-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", cors(`nginx.ingress.kubernetes.io/cors-max-age: "1d"`), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				if got := responseHeader(vh.GetRoutes()[len(vh.GetRoutes())-1].GetResponseHeadersToAdd(), "access-control-max-age"); got != "1728000" {
					t.Errorf("Access-Control-Max-Age %q, want ingress-nginx's default 1728000", got)
				}
			}},
		{name: "custom-headers-configmap-missing", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", headers("default/nowhere"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "custom-headers-other-namespace", reason: "InvalidAnnotation",
			manifests: badService + configMap("headers", "kube-system", `X-Frame-Options: DENY`) + annotated("bad", headers("kube-system/headers"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "custom-headers-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", headers("just-a-name"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "custom-headers-hostile-value", reason: "InvalidAnnotation",
			manifests: badService + configMap("headers", "default", `X-Frame-Options: "DENY\r\nSet-Cookie: a=b", X-Percent: "a\u0000b"`) + annotated("bad", headers("default/headers"), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				routeAnswers("bad.example.com", 503)(t, res)
				noHostileHeader(t, res)
			}},
		{name: "custom-headers-hostile-name", reason: "InvalidAnnotation",
			manifests: badService + configMap("headers", "default", `"X-Frame-Options\r\nSet-Cookie": a, "X Percent": b`) + annotated("bad", headers("default/headers"), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				routeAnswers("bad.example.com", 503)(t, res)
				noHostileHeader(t, res)
			}},
		{name: "custom-headers-not-allowed", reason: "InvalidAnnotation",
			manifests: badService + configMap("headers", "default", `X-Frame-Options: DENY, X-Powered-By: me`) + annotated("bad", headers("default/headers"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "custom-headers-framing", reason: "InvalidAnnotation",
			manifests: badService + configMap("headers", "default", `Content-Length: "0", Transfer-Encoding: chunked`) + annotated("bad", headers("default/headers"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "connection-proxy-header-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/connection-proxy-header: "upgrade\r\nX-Injected: 1"`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				plainRoute("bad.example.com")(t, res)
				r := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com").GetRoutes()[0]
				if slices.ContainsFunc(r.GetRequestHeadersToAdd(), func(h *corev3.HeaderValueOption) bool { return strings.EqualFold(h.GetHeader().GetKey(), "connection") }) {
					t.Errorf("a Connection header that does not parse was set: %v", r.GetRequestHeadersToAdd())
				}
			}},
	}
}

// responseHeader is the value headers set for a response header.
func responseHeader(headers []*corev3.HeaderValueOption, name string) string {
	for _, h := range headers {
		if h.GetHeader().GetKey() == name {
			return h.GetHeader().GetValue()
		}
	}
	return ""
}

// noHostileHeader checks that no CR, LF or NUL reaches a header of any
// route.
func noHostileHeader(t *testing.T, res *translate.Result) {
	t.Helper()
	for _, rc := range res.Resources.Routes {
		for _, encoded := range rc.VirtualHosts {
			vh, err := renderer.Expand(encoded)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range vh.GetRoutes() {
				for _, h := range r.GetResponseHeadersToAdd() {
					if strings.ContainsAny(h.GetHeader().GetKey()+h.GetHeader().GetValue(), "\r\n\x00") {
						t.Errorf("a hostile header reached a route of %s: %q", vh.Name, h.GetHeader())
					}
				}
			}
		}
	}
}

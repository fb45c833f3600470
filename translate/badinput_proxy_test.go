package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// proxyBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// proxy keys: a value ingress-nginx would not apply is reported and not
// applied, and the rest of the Ingress is served as without it.
func proxyBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	return []badInputCase{
		{name: "proxy-timeout-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-read-timeout: "10x", nginx.ingress.kubernetes.io/proxy-send-timeout: "0", nginx.ingress.kubernetes.io/proxy-connect-timeout: "-1"`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "proxy-size-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-body-size: "1q", nginx.ingress.kubernetes.io/client-body-buffer-size: "1b"`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "proxy-retries-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-next-upstream: "error bogus", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "-1"`, rule),
			check:     plainRoute("bad.example.com")},
		// The largest values that parse still make configuration Envoy
		// takes (a bound over 4 GiB is none: Envoy buffers no more).
		{name: "proxy-values-extreme", reason: "",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-read-timeout: "1000000000", nginx.ingress.kubernetes.io/proxy-connect-timeout: "1000000000", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "2147483647", nginx.ingress.kubernetes.io/proxy-body-size: "4294967295"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/proxy-body-size: "4g"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: routeForwards("bad.example.com")},
		{name: "proxy-tries-unlimited", reason: "UnsupportedAnnotationValue",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "0"`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				if got := vh.GetRoutes()[0].GetRoute().GetRetryPolicy().GetNumRetries().GetValue(); got != 2 {
					t.Errorf("tries 0: %d retries, want ingress-nginx's default of 3 tries (2 retries)", got)
				}
			}},
	}
}

// plainRoute checks that host's one route forwards to its Service's
// default cluster with none of the proxy keys' settings: no timeouts or
// body bound of their own, and ingress-nginx's default retries (error
// timeout, 3 tries), which every route has: for every method what fails
// before the request is sent, the rest from the listener's filter.
func plainRoute(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 {
			t.Fatalf("%s is not served by one route: %v", host, vh)
		}
		route := vh.GetRoutes()[0]
		ra := route.GetRoute()
		if ra.GetCluster() != "default/bad/80" || ra.Timeout != nil || ra.IdleTimeout != nil || len(route.TypedPerFilterConfig) != 0 ||
			ra.GetRetryPolicy().GetRetryOn() != "connect-failure,reset-before-request" || ra.GetRetryPolicy().GetNumRetries().GetValue() != 2 {
			t.Errorf("%s: a value that does not parse was applied: %v", host, route)
		}
	}
}

package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// accessBadInputCases are the rows of docs/bad-input.md for the source
// ranges and rate limits: a range or a rate that does not parse refuses the
// Ingress (its routes answer 503, as ingress-nginx denies the location),
// never serving it more openly than asked.
func accessBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	return []badInputCase{
		{name: "source-range-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/allowlist-source-range: "10.0.0.0/33, 1.2.3.4", nginx.ingress.kubernetes.io/denylist-source-range: "fe80::1%eth0"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "source-range-empty", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/whitelist-source-range: "", nginx.ingress.kubernetes.io/denylist-source-range: " , "`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "source-range-injection", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/allowlist-source-range: "10.0.0.0/8\r\nallow all;\u0000"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "rate-limit-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rps: "10r/s", nginx.ingress.kubernetes.io/limit-rpm: "-1", nginx.ingress.kubernetes.io/limit-burst-multiplier: "x"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		// A broken exemption list leaves everyone limited.
		{name: "rate-limit-allowlist-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rps: "10", nginx.ingress.kubernetes.io/limit-allowlist: "10.0.0.0/8,"`, rule),
			check:     rateLimited("bad.example.com", false)},
		// The largest values that parse still make configuration Envoy
		// takes (a bucket over 2^32-1 requests is that many).
		{name: "rate-limit-extreme", reason: "",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rps: "2147483647", nginx.ingress.kubernetes.io/limit-rpm: "2147483647", nginx.ingress.kubernetes.io/limit-burst-multiplier: "2147483647", nginx.ingress.kubernetes.io/limit-whitelist: "0.0.0.0/0, ::/0"`, rule),
			check:     rateLimited("bad.example.com", true)},
		// limit-rate is an access control: a value that does not parse
		// refuses, never serving the responses at full speed.
		{name: "limit-rate-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rate: "10k"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		// The largest pace that parses is one Envoy takes.
		{name: "limit-rate-extreme", reason: "",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rate: "2147483647"`, rule),
			check:     responsePaced("bad.example.com")},
		{name: "limit-rate-after-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-rate: "100", nginx.ingress.kubernetes.io/limit-rate-after: "1m"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "limit-connections-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-connections: "8 per client"`, rule),
			check:     routeAnswers("bad.example.com", 503)},
		// The largest limit that parses is one the service takes, and
		// an allow-list of every address leaves nobody counted.
		{name: "limit-connections-extreme", reason: "",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/limit-connections: "2147483647", nginx.ingress.kubernetes.io/limit-whitelist: "0.0.0.0/0, ::/0"`, rule),
			check:     connectionLimited("bad.example.com")},
	}
}

// rateLimited checks that host's route forwards with a rate limit, and
// with the exemption filter's configuration or without.
func rateLimited(host string, exempt bool) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
			t.Fatalf("%s is not forwarded to its Service: %v", host, vh)
		}
		per := vh.GetRoutes()[0].GetTypedPerFilterConfig()
		if per["envoy.filters.http.local_ratelimit"] == nil {
			t.Errorf("%s: no rate limit: %v", host, per)
		}
		if got := per["ingress-xds.rate-limit-exempt"] != nil; got != exempt {
			t.Errorf("%s: exemptions configured %v, want %v", host, got, exempt)
		}
	}
}

// responsePaced checks that host's route forwards with the fault filter's
// pace (limit-rate).
func responsePaced(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
			t.Fatalf("%s is not forwarded to its Service: %v", host, vh)
		}
		if vh.GetRoutes()[0].GetTypedPerFilterConfig()["envoy.filters.http.fault"] == nil {
			t.Errorf("%s: no pace: %v", host, vh.GetRoutes()[0].GetTypedPerFilterConfig())
		}
	}
}

// connectionLimited checks that host's route forwards with the ext_proc
// filter of the connection limit (limit-connections).
func connectionLimited(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
			t.Fatalf("%s is not forwarded to its Service: %v", host, vh)
		}
		if vh.GetRoutes()[0].GetTypedPerFilterConfig()["envoy.filters.http.ext_proc"] == nil {
			t.Errorf("%s: no connection limit: %v", host, vh.GetRoutes()[0].GetTypedPerFilterConfig())
		}
	}
}

package translate_test

import (
	"testing"

	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// observabilityBadInputCases are the rows of docs/bad-input.md for the
// access log and tracing: values that do not parse, an operation name
// with nginx variables, tracing asked without a collector. Each is
// reported and treated as unset: no listener gets a tracer or an access
// log it did not ask for, and the route is served as without the keys.
func observabilityBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	bad := badService + ingress("bad", rule)
	return []badInputCase{
		{name: "configmap-observability-value-unparsable", reason: "InvalidConfigMapValue",
			manifests: bad + controllerConfigMap(`enable-opentelemetry: "maybe", otlp-collector-host: "not a host!", otlp-collector-port: "x", `+
				`otel-sampler: "Sometimes", otel-sampler-ratio: "2", otel-sampler-parent-based: "maybe", opentelemetry-trust-incoming-span: "perhaps", `+
				`skip-access-log-urls: "~(?<=x)", access-log-path: "/var/log/envoy.log", enable-access-log-for-default-backend: "maybe", `+
				`log-format-escape-json: "maybe", log-format-upstream: "$status $upstream_cache_status"`),
			check: observabilityUnset("bad.example.com")},
		{name: "observability-annotations-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/enable-access-log: "maybe", nginx.ingress.kubernetes.io/opentelemetry-operation-name: "HTTP $request_method $uri"`, rule),
			check:     observabilityUnset("bad.example.com")},
		{name: "opentelemetry-without-collector", reason: "OpentelemetryWithoutCollector",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/enable-opentelemetry: "true"`, rule),
			check:     observabilityUnset("bad.example.com")},
	}
}

// observabilityUnset checks that host is served by its one plain route,
// with no route metadata, tracing or decorator, and that no listener has
// a tracer or an access log.
func observabilityUnset(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		plainRoute(host)(t, res)
		route := vhostNamed(res, frontend.HTTPListenerName, host).GetRoutes()[0]
		if route.Metadata != nil || route.Tracing != nil || route.Decorator != nil {
			t.Errorf("%s: route metadata, tracing or a decorator set: %v", host, route)
		}
		for _, l := range res.Resources.Listeners {
			for _, fc := range l.GetFilterChains() {
				for _, f := range fc.GetFilters() {
					hcm := &hcmv3.HttpConnectionManager{}
					if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
						t.Fatalf("listener %s: %v", l.GetName(), err)
					}
					if hcm.Tracing != nil || len(hcm.AccessLog) > 0 || len(hcm.EarlyHeaderMutationExtensions) > 0 {
						t.Errorf("listener %s: a tracer, an access log or a header mutation set: %v", l.GetName(), hcm)
					}
				}
			}
		}
		for _, c := range res.Resources.Clusters {
			if c.GetName() == "ingress-xds-otlp" {
				t.Errorf("the collector's cluster is sent")
			}
		}
	}
}

package annotations

import (
	"fmt"
	"strings"
	"unicode"
)

// EnableOpentelemetry traces an Ingress's requests.
var EnableOpentelemetry = key[bool](&definition{
	name:  "enable-opentelemetry",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": the Ingress's requests are traced with OpenTelemetry (a span each, sent to the controller ConfigMap's ` +
		`otlp-collector-host, and the W3C traceparent passed to the backend); "false": not, whatever the ConfigMap's enable-opentelemetry says.`,
	verdict: HonouredWithDifference,
	note: `Envoy's OpenTelemetry tracer: its span has Envoy's attributes (http.method, http.url, http.status_code, ` +
		`upstream_cluster, ...), not nginx's module's. Without the ConfigMap's otlp-collector-host there is nowhere to send spans: reported, not traced.`,
}, parseBool)

// OpentelemetryOperationName names an Ingress's spans.
var OpentelemetryOperationName = key[string](&definition{
	name:    "opentelemetry-operation-name",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The name of the Ingress's spans; empty: Envoy's (the request's host and path).`,
	verdict: HonouredWithDifference,
	note: `A name as written (Envoy's route decorator): nginx variables ("HTTP $request_method $uri") are not expanded, ` +
		`so a name with one is reported and not applied.`,
}, parseOperationName)

// OpentelemetryTrustIncomingSpan says whether a client's trace context is
// the parent of the span.
var OpentelemetryTrustIncomingSpan = key[bool](&definition{
	name:    "opentelemetry-trust-incoming-span",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"false": a client's traceparent is not the parent of the Ingress's spans, each request starts a trace.`,
	verdict: Ignored,
	note: `Per Ingress it cannot be applied: Envoy starts the span before it routes, so the client's trace context is ` +
		`trusted or dropped for the whole listener, by the controller ConfigMap's opentelemetry-trust-incoming-span; an Ingress ` +
		`whose value differs from it is reported (OpentelemetryTrustNotApplied).`,
}, parseBool)

// parseOperationName reads a span name: printable text without nginx
// variables.
func parseOperationName(s string) (string, error) {
	if strings.Contains(s, "$") {
		return "", fmt.Errorf("nginx variables are not expanded in a span name")
	}
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "", fmt.Errorf("not printable text")
	}
	return strings.TrimSpace(s), nil
}

// opentelemetryKeys are the tracing keys.
func opentelemetryKeys() []*definition {
	return []*definition{EnableOpentelemetry.def, OpentelemetryOperationName.def, OpentelemetryTrustIncomingSpan.def}
}

package ir

import (
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Tracing is a listener's OpenTelemetry tracing (ingress-nginx's
// enable-opentelemetry and otel-* keys): where spans go, how they are
// sampled, and whether a client's trace context is trusted. A route is
// traced when its policy says so (RouteTracing).
type Tracing struct {
	// CollectorHost and CollectorPort are the OTLP/gRPC collector's
	// address (an IP address or a DNS name).
	CollectorHost string `json:"collectorHost"`
	CollectorPort uint32 `json:"collectorPort"`
	// ServiceName is the spans' service.name.
	ServiceName string `json:"serviceName"`
	// Ratio is the share of traces sampled, from 0 to 1.
	Ratio float64 `json:"ratio"`
	// ParentBased follows the sampling decision of the client's trace
	// context, when it has one.
	ParentBased bool `json:"parentBased,omitempty"`
	// Untrusted drops the client's trace context (traceparent,
	// tracestate) before the span starts: every request starts a trace.
	Untrusted bool `json:"untrusted,omitempty"`
}

// RouteTracing is whether a route's requests are traced, and the name of
// their spans.
type RouteTracing struct {
	// Operation is the span's name; empty: Envoy's.
	Operation string `json:"operation,omitempty"`
}

func (t *Tracing) validate() error {
	var v violations
	if _, err := netip.ParseAddr(t.CollectorHost); err != nil && len(validation.IsDNS1123Subdomain(t.CollectorHost)) > 0 {
		v.add("CollectorHost", ErrBadHost, "collector host %q", t.CollectorHost)
	}
	if t.CollectorPort == 0 || t.CollectorPort > 65535 {
		v.add("CollectorPort", ErrOutOfRange, "collector port %d", t.CollectorPort)
	}
	if hasControl(t.ServiceName) {
		v.add("ServiceName", ErrBadValue, "service name %q", t.ServiceName)
	}
	if !(t.Ratio >= 0 && t.Ratio <= 1) {
		v.add("Ratio", ErrOutOfRange, "sampling ratio %v", t.Ratio)
	}
	return v.join()
}

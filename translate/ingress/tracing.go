package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseTracing reads the Opentelemetry group: whether the Ingress's
// requests are traced (enable-opentelemetry, its default the controller
// ConfigMap's, as ingress-nginx's buildOpentelemetryForLocation decides),
// and their spans' name. Without the ConfigMap's collector there is
// nowhere to send spans: reported, not traced.
func parseTracing(values *annotations.Values, env groupEnv) (*ir.RouteTracing, []problem) {
	var problems []problem
	// Envoy starts the span before it routes: whether a client's trace
	// context is trusted is the listener's (the ConfigMap's key). An
	// Ingress asking otherwise is told, never silently trusted.
	if trust, ok := annotations.OpentelemetryTrustIncomingSpan.Get(values); ok {
		if t := env.opts.config.tracing(); t != nil && trust == t.Untrusted {
			problems = append(problems, problemf("OpentelemetryTrustNotApplied", "%s=%t: Envoy trusts or drops a client's trace context for the whole listener, before routing: the controller ConfigMap's opentelemetry-trust-incoming-span (%t) applies",
				annotations.OpentelemetryTrustIncomingSpan.Name(), trust, !t.Untrusted))
		}
	}
	on, _ := annotations.EnableOpentelemetry.Get(values)
	if !on {
		return nil, problems
	}
	if env.opts.config.tracing() == nil {
		return nil, append(problems, problemf("OpentelemetryWithoutCollector", "%s: the controller ConfigMap names no otlp-collector-host to send spans to: not traced",
			annotations.EnableOpentelemetry.Name()))
	}
	name, _ := annotations.OpentelemetryOperationName.Get(values)
	return &ir.RouteTracing{Operation: name}, problems
}

// tracing is the listeners' tracing; nil without a collector.
func (c *controllerConfig) tracing() *ir.Tracing {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Tracing
}

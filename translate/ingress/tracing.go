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
	on, _ := annotations.EnableOpentelemetry.Get(values)
	if !on {
		return nil, nil
	}
	if env.opts.config.tracing() == nil {
		return nil, []problem{problemf("OpentelemetryWithoutCollector", "%s: the controller ConfigMap names no otlp-collector-host to send spans to: not traced",
			annotations.EnableOpentelemetry.Name())}
	}
	name, _ := annotations.OpentelemetryOperationName.Get(values)
	return &ir.RouteTracing{Operation: name}, nil
}

// tracing is the listeners' tracing; nil without a collector.
func (c *controllerConfig) tracing() *ir.Tracing {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Tracing
}

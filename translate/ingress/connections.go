package ingress

import "github.com/ingress-xds/ingress-xds/translate/ir"

// downstream is what the controller ConfigMap sets of how a listener
// treats client connections (keep-alive, TLS, the client's address, the
// access log); nil without a ConfigMap. flagHops: the listener's trusted
// hops are serve --trusted-forwarded-hops', which win.
func (c *controllerConfig) downstream(p ir.Protocol, flagHops bool) *ir.Downstream {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Downstream(p, flagHops)
}

// upstream is what the controller ConfigMap sets of every backend
// cluster's connections (upstream-keepalive-*); nil: Envoy's.
func (c *controllerConfig) upstream() *ir.Upstream {
	if c == nil || c.settings == nil {
		return nil
	}
	return c.settings.Upstream
}

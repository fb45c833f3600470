package ingress

import (
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The access log (the controller ConfigMap's log-format-upstream): an
// Ingress may keep its requests out of it (enable-access-log, the Logs
// group), and its routes carry the names ingress-nginx's log variables
// give them ($service_name, $proxy_upstream_name, ...) when the format
// asks for them.

// parseLogs reads the Logs group: whether the Ingress's requests are left
// out of the access log.
func parseLogs(values *annotations.Values) (noAccessLog bool) {
	on, ok := annotations.EnableAccessLog.Get(values)
	return ok && !on
}

// logNames are the route variables the access log's format reads.
func (c *controllerConfig) logNames() configmap.LogNames {
	if c == nil || c.settings == nil {
		return configmap.LogNames{}
	}
	return c.settings.LogNames
}

// routeLog is what the access log reads of a route of the Ingress to an
// Ingress backend, the names need asks for: its Ingress, its Service and
// port as the Ingress writes them, and ingress-nginx's upstream name (its
// upstreamName: namespace-service-port); nil when it asks for none. The
// request metrics (metrics) read the Ingress, the Service, the canary
// and the path as written.
func routeLog(ing *networkingv1.Ingress, backend *networkingv1.IngressBackend, need configmap.LogNames, metrics bool, path string) *ir.RouteLog {
	var l ir.RouteLog
	if metrics {
		need.Namespace, need.Ingress, need.Service, need.Canary = true, true, true, true
		l.Path = path
	}
	if need.Namespace {
		l.Namespace = ing.Namespace
	}
	if need.Ingress {
		l.Ingress = ing.Name
	}
	if backend != nil && backend.Service != nil {
		port := backend.Service.Port.Name
		if backend.Service.Port.Number > 0 {
			port = strconv.Itoa(int(backend.Service.Port.Number))
		}
		if need.Service {
			l.Service = backend.Service.Name
		}
		if need.ServicePort {
			l.ServicePort = port
		}
		if need.Upstream || need.Canary {
			// The canary's upstream name is its route's own.
			l.Upstream = ing.Namespace + "-" + backend.Service.Name + "-" + port
		}
	}
	if l == (ir.RouteLog{}) {
		return nil
	}
	return &l
}

// withCanary is a mainline route's log with the canary that may take its
// requests: when the format reads upstream names, the routes of both have
// one.
func withCanary(main, canary *ir.RouteLog, cluster string) *ir.RouteLog {
	if main == nil || canary == nil || canary.Upstream == "" {
		return main
	}
	l := *main
	l.CanaryCluster, l.CanaryUpstream = cluster, canary.Upstream
	return &l
}

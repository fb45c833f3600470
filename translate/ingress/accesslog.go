package ingress

import (
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
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

// logNames says whether the access log's format reads the routes' names.
func (c *controllerConfig) logNames() bool {
	return c != nil && c.settings != nil && c.settings.LogNames
}

// routeLog is what the access log says of a route to an Ingress backend:
// its Service and port as the Ingress writes them, and ingress-nginx's
// upstream name (its upstreamName: namespace-service-port); nil for a
// resource backend, which has none.
func routeLog(namespace string, backend *networkingv1.IngressBackend) *ir.RouteLog {
	if backend == nil || backend.Service == nil {
		return nil
	}
	port := backend.Service.Port.Name
	if backend.Service.Port.Number > 0 {
		port = strconv.Itoa(int(backend.Service.Port.Number))
	}
	return &ir.RouteLog{Service: backend.Service.Name, ServicePort: port, Upstream: namespace + "-" + backend.Service.Name + "-" + port}
}

// withCanary is a mainline route's log with the canary that may take its
// requests.
func withCanary(main, canary *ir.RouteLog, cluster string) *ir.RouteLog {
	if main == nil || canary == nil {
		return main
	}
	l := *main
	l.CanaryCluster, l.CanaryUpstream = cluster, canary.Upstream
	return &l
}

package ingress

import (
	"cmp"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The default-backend annotation: a Service of the Ingress's namespace that
// answers when the rule's Service cannot. ingress-nginx decides when it
// writes its configuration (the rule's upstream has no endpoint: the
// location sends to the default backend); here Envoy decides for each
// request, with an aggregate cluster of the rule's cluster then the
// default backend's (ir/aggregate.go), so that routes never depend on
// endpoints. Where the rule's Service does not exist or lacks the port,
// nothing can change without a new translation, and the route sends to
// the default backend itself, with the headers ingress-nginx adds.

// fallbackIntent is what default-backend asks.
type fallbackIntent struct {
	service types.NamespacedName
	// codes are custom-http-errors' (sorted, unique); nil: none.
	codes    []uint32
	resolved bool        // cluster has been looked for
	cluster  *clusterRef // the default backend's; nil: unusable (reported)
}

// parseFallback reads default-backend, custom-http-errors and
// disable-proxy-intercept-errors; nil: no default backend.
func parseFallback(values *annotations.Values, env groupEnv) (*fallbackIntent, []problem) {
	codes, hasCodes := annotations.CustomHTTPErrors.Get(values)
	if off, _ := annotations.DisableProxyInterceptErrors.Get(values); off {
		codes, hasCodes = nil, false
	}
	name, ok := annotations.DefaultBackend.Get(values)
	if !ok {
		if hasCodes && !annotations.DefaultBackend.Invalid(values) {
			return nil, []problem{problemf("UnsupportedAnnotation", "annotation %s without %s: ingress-nginx sends the errors to its global default backend, "+
				"and ingress-xds has none: the responses pass through", annotations.CustomHTTPErrors.Name(), annotations.DefaultBackend.Name())}
		}
		return nil, nil
	}
	return &fallbackIntent{service: types.NamespacedName{Namespace: env.ing.Namespace, Name: name}, codes: codes}, nil
}

// fallbackCluster is the default backend's cluster, resolved once per
// Ingress: the Service's first port, reached as the Ingress reaches its
// rules' Services (its cluster policy). nil when none was asked or it is
// unusable, which is reported once.
func (f *fragmentBuilder) fallbackCluster() *clusterRef {
	fb := f.fallback
	if fb == nil || fb.resolved {
		return fb.clusterOrNil()
	}
	fb.resolved = true
	refuse := func(why string) *clusterRef {
		f.problem("InvalidAnnotation", "annotation %s=%q: %s: not used", annotations.DefaultBackend.Name(), fb.service.Name, why)
		return nil
	}
	svc := f.service(fb.service)
	switch {
	case svc == nil:
		return refuse(fmt.Sprintf("service %s not found", fb.service))
	case svc.Type == corev1.ServiceTypeExternalName:
		return refuse(fmt.Sprintf("service %s is of type ExternalName, which has no endpoints to fall back to", fb.service))
	case len(svc.Ports) == 0:
		return refuse(fmt.Sprintf("service %s has no port", fb.service))
	case svc.Ports[0].Protocol != "" && svc.Ports[0].Protocol != corev1.ProtocolTCP:
		return refuse(fmt.Sprintf("service %s's first port is not TCP", fb.service))
	}
	port := svc.Ports[0]
	ref := &backendRef{name: fmt.Sprintf("%s/%s/%d", fb.service.Namespace, fb.service.Name, port.Port), service: fb.service, port: port}
	fb.cluster = f.newClusterRef(ref, f.backendPolicy(ref))
	return fb.cluster
}

func (fb *fallbackIntent) clusterOrNil() *clusterRef {
	if fb == nil {
		return nil
	}
	return fb.cluster
}

// withFallback wraps a route's cluster in an aggregate with the default
// backend's, when one is asked and usable. A cluster that always has an
// address to send to (an ExternalName Service's, service-upstream's) never
// falls back, as in ingress-nginx, whose upstream then has an endpoint.
func (f *fragmentBuilder) withFallback(primary *clusterRef) *clusterRef {
	fb := f.fallbackCluster()
	if fb == nil || primary.backend.external() || primary.policy != nil && primary.policy.ServiceAddress != "" {
		return primary
	}
	agg := aggregateOf(primary, fb)
	if primary.overTLS != nil && agg != primary {
		// AUTO_HTTP: over TLS, the rule's cluster over TLS then the
		// default backend's, as nginx's $scheme reaches either.
		agg.overTLS = aggregateOf(primary.overTLS, cmp.Or(fb.overTLS, fb))
	}
	return agg
}

// aggregateOf is the aggregate cluster of primary then fb, or primary
// when the two are one.
func aggregateOf(primary, fb *clusterRef) *clusterRef {
	if fb.name == primary.name {
		return primary
	}
	return &clusterRef{
		name:      ir.AggregateClusterName(primary.backend.name, []string{primary.name, fb.name}),
		backend:   primary.backend,
		policy:    primary.policy, // the first cluster's: a canary is reached as it is
		aggregate: []*clusterRef{primary, fb},
	}
}

// insteadOf sends a route whose Service does not exist or lacks the port
// to the default backend, with the headers ingress-nginx's location adds
// when it sends to a custom default backend, and retells the problems
// resolving the Service reported since the index problemsBefore. It
// reports false when there is no usable default backend or the backend
// failed for another reason (those stay 503, as they do in ingress-nginx).
func (f *fragmentBuilder) insteadOf(backend *networkingv1.IngressBackend, route *ir.Route, problemsBefore int) (*clusterRef, bool) {
	if f.fallback == nil || f.upstream.denied != "" || backend.Service == nil || len(f.frag.problems) <= problemsBefore {
		return nil, false
	}
	last := &f.frag.problems[len(f.frag.problems)-1]
	if last.Reason != "ServiceNotFound" && last.Reason != "ServicePortNotFound" {
		return nil, false
	}
	fb := f.fallbackCluster()
	if fb == nil {
		return nil, false
	}
	last.Message = strings.TrimSuffix(last.Message, "answering 503") + "the default backend " + fb.backend.name + " answers"
	port := backend.Service.Port.Name
	if port == "" {
		port = fmt.Sprint(backend.Service.Port.Number)
	}
	var p ir.RoutePolicy
	if route.Policy != nil {
		p = *route.Policy
	}
	var h ir.HeaderChanges
	if p.RequestHeaders != nil {
		h = *p.RequestHeaders
	}
	h.Set = append(h.Set[:len(h.Set):len(h.Set)],
		ir.Header{Name: "X-Code", Value: "503"},
		ir.Header{Name: "X-Namespace", Value: f.ing.Namespace},
		ir.Header{Name: "X-Ingress-Name", Value: f.ing.Name},
		ir.Header{Name: "X-Service-Name", Value: backend.Service.Name},
		ir.Header{Name: "X-Service-Port", Value: port},
	)
	p.RequestHeaders = &h
	route.Policy = &p
	return fb, true
}

// aggregateCluster is the IR value of an aggregate ref.
func (r *clusterRef) aggregateCluster() *ir.Cluster {
	names := make([]string, len(r.aggregate))
	for i, c := range r.aggregate {
		names[i] = c.name
	}
	return &ir.Cluster{Name: r.name, Backend: r.backend.name, Aggregate: names}
}

// sameAggregate says whether two refs aggregate the same clusters.
func sameAggregate(a, b []*clusterRef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].sameAs(b[i]) {
			return false
		}
	}
	return true
}

// withAggregated lists a cluster and those it aggregates, then its
// cluster over TLS and those that one aggregates.
func (r *clusterRef) withAggregated() []*clusterRef {
	out := append([]*clusterRef{r}, r.aggregate...)
	if r.overTLS != nil {
		out = append(out, r.overTLS.withAggregated()...)
	}
	return out
}

// errorPagesPrefix starts the path of each Ingress's error route.
const errorPagesPrefix = "/.ingress-xds/error-pages/"

// addErrorPages gives a forwarding route custom-http-errors' error pages,
// when asked with a usable default backend, and makes the Ingress's error
// route for the host: what nginx's @custom_ location does, a GET of "/"
// to the default backend. The route's policy becomes its own (its headers
// name its Service).
func (f *fragmentBuilder) addErrorPages(host string, route *ir.Route, backend *networkingv1.IngressBackend) {
	fb := f.fallback
	if fb == nil || len(fb.codes) == 0 || backend.Service == nil {
		return
	}
	cluster := f.fallbackCluster()
	if cluster == nil {
		return
	}
	port := backend.Service.Port.Name
	if port == "" {
		port = fmt.Sprint(backend.Service.Port.Number)
	}
	path := errorPagesPrefix + f.ing.Namespace + "/" + f.ing.Name
	var p ir.RoutePolicy
	if route.Policy != nil {
		p = *route.Policy
	}
	p.ErrorPages = &ir.ErrorPages{Codes: fb.codes, Path: path, Headers: []ir.Header{
		{Name: "X-Namespace", Value: f.ing.Namespace},
		{Name: "X-Ingress-Name", Value: f.ing.Name},
		{Name: "X-Service-Name", Value: backend.Service.Name},
		{Name: "X-Service-Port", Value: port},
	}}
	route.Policy = &p
	for _, er := range f.frag.errorRoutes {
		if er.host == host {
			return
		}
	}
	f.frag.errorRoutes = append(f.frag.errorRoutes, hostRoute{
		host: host,
		route: &ir.Route{
			Match: ir.Match{PathType: ir.PathPrefix, Path: path},
			// Plain HTTP on either listener, even with AUTO_HTTP: nginx's
			// @custom_ location proxies to http://upstream_balancer.
			Action: ir.Action{Forward: &ir.Forward{Clusters: []ir.WeightedCluster{{Cluster: cluster.name, Weight: 1}}}},
			Policy: &ir.RoutePolicy{Rewrite: &ir.Rewrite{Prefix: "/"}},
			Source: f.source(),
		},
		cluster: cluster,
		where:   location{label: "annotation " + annotations.CustomHTTPErrors.Name()},
		ingress: f.ing,
	})
}

// errorRoute is a fragment's error route for host, if it has one.
func (f *fragment) errorRoute(host string) (hostRoute, bool) {
	for _, er := range f.errorRoutes {
		if er.host == host {
			return er, true
		}
	}
	return hostRoute{}, false
}

// addErrorRoutes puts the error routes of the host's kept routes first,
// ahead of every route that could match their paths, with their
// clusters.
func (h *hostMerge) addErrorRoutes(routes []hostRoute, used map[string]bool) {
	if h.vhost == nil || len(routes) == 0 {
		return
	}
	out := make([]*ir.Route, 0, len(routes)+len(h.vhost.Routes))
	for _, er := range routes {
		out = append(out, er.route)
		if !used[er.cluster.name] {
			used[er.cluster.name] = true
			h.clusters = append(h.clusters, er.cluster)
		}
	}
	h.vhost.Routes = append(out, h.vhost.Routes...)
}

// appendErrorRoute adds an Ingress's error route once.
func appendErrorRoute(routes []hostRoute, er hostRoute) []hostRoute {
	for _, r := range routes {
		if r.route == er.route {
			return routes
		}
	}
	return append(routes, er)
}

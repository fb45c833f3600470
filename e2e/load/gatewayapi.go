package load

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// The Gateway API workload (Workload.GatewayAPI): the same hosts, paths,
// Services and EndpointSlices, each workload Ingress's host an HTTPRoute
// of its own (its PathsPerHost PathPrefix rules, each to its Service),
// attached to one Gateway's HTTP listener.
const (
	// GatewayClassName and GatewayController are the GatewayClass the
	// control plane under test must serve (ingress-xds's default
	// controllerName); GatewayName the Gateway.
	GatewayClassName  = "ingress-xds"
	GatewayController = "ingress-xds.io/gateway-controller"
	GatewayName       = "load"
	// gatewayPort is the listener's: the port clients reach Envoy's HTTP
	// listener on, which the front-end serves whatever port Envoy binds
	// ({http_port}).
	gatewayPort = 80
)

// GatewayClass is the workload's GatewayClass.
func GatewayClass() *gwapiv1.GatewayClass {
	return &gwapiv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: GatewayClassName},
		Spec: gwapiv1.GatewayClassSpec{ControllerName: GatewayController}}
}

// Gateway is the workload's Gateway: one HTTP listener.
func (w Workload) Gateway() *gwapiv1.Gateway {
	return &gwapiv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: GatewayName, Namespace: w.Namespace},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: GatewayClassName,
			Listeners: []gwapiv1.Listener{{Name: "http", Port: gatewayPort, Protocol: gwapiv1.HTTPProtocolType}}}}
}

// HTTPRouteName names the HTTPRoute of host h of workload Ingress i.
func HTTPRouteName(i, h int) string { return fmt.Sprintf("%s-%c", IngressName(i), 'a'+h) }

// HTTPRoute is the Route of host h of workload Ingress i: the host and
// its paths as the Ingress routes them.
func (w Workload) HTTPRoute(i, h int) *gwapiv1.HTTPRoute {
	return w.httpRoute(HTTPRouteName(i, h), []string{Host(i, h)}, func(p int) int { return ServiceOf(i, h, p) })
}

// ChangeHTTPRoute is the HTTPRoute that HTTPRoute-change sample k
// creates: as ChangeIngress, new hosts (unique to run) routing to the
// Services of workload Ingress backendsOf (its first host's).
func (w Workload) ChangeHTTPRoute(run string, k, backendsOf int) *gwapiv1.HTTPRoute {
	ing := w.ChangeIngress(run, k, backendsOf)
	hosts := make([]string, 0, len(ing.Spec.Rules))
	for _, r := range ing.Spec.Rules {
		hosts = append(hosts, r.Host)
	}
	return w.httpRoute(ing.Name, hosts, func(p int) int { return ServiceOf(backendsOf, 0, p) })
}

// httpRoute routes path p of its hosts to Service service(p).
func (w Workload) httpRoute(name string, hosts []string, service func(p int) int) *gwapiv1.HTTPRoute {
	r := &gwapiv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace}}
	r.Spec.ParentRefs = []gwapiv1.ParentReference{{Name: GatewayName}}
	for _, h := range hosts {
		r.Spec.Hostnames = append(r.Spec.Hostnames, gwapiv1.Hostname(h))
	}
	for p := range PathsPerHost {
		r.Spec.Rules = append(r.Spec.Rules, gwapiv1.HTTPRouteRule{
			Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: ptr.To(gwapiv1.PathMatchPathPrefix), Value: ptr.To(Path(p))}}},
			BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
				Name: gwapiv1.ObjectName(ServiceName(service(p))), Port: ptr.To(gwapiv1.PortNumber(servicePort))}}}},
		})
	}
	return r
}

// createGateway writes the GatewayClass and the Gateway.
func (c *creator) createGateway(ctx context.Context, gw gwclient.Interface) error {
	if err := c.one(ctx, "GatewayClass", func(ctx context.Context) error {
		_, err := gw.GatewayV1().GatewayClasses().Create(ctx, GatewayClass(), metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	return c.one(ctx, "Gateway", func(ctx context.Context) error {
		_, err := gw.GatewayV1().Gateways(c.w.Namespace).Create(ctx, c.w.Gateway(), metav1.CreateOptions{})
		return err
	})
}

// httpRouteChanges creates count HTTPRoutes, one at a time, each with new
// hosts, and times each until the client routes both hosts: the
// Gateway API counterpart of ingressChanges.
func (c *changer) httpRouteChanges(ctx context.Context, count int) ([]Sample, error) {
	return c.hostChanges(ctx, count, "HTTPRoute", func(ctx context.Context, k int) (string, []string, error) {
		r := c.w.ChangeHTTPRoute(c.run, k, pick(k, c.w.N))
		hosts := make([]string, 0, len(r.Spec.Hostnames))
		for _, h := range r.Spec.Hostnames {
			hosts = append(hosts, string(h))
		}
		_, err := c.gateway.GatewayV1().HTTPRoutes(c.w.Namespace).Create(ctx, r, metav1.CreateOptions{})
		return r.Name, hosts, err
	})
}

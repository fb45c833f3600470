package load

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/ingress-xds/ingress-xds/kube"
)

// The shape of the workload, fixed so that runs compare with the peer's
// published figures: each Ingress has HostsPerIngress hosts of PathsPerHost
// Prefix paths, each path to a Service of its own whose one EndpointSlice
// holds EndpointsPerSlice ready endpoints.
const (
	HostsPerIngress    = 2
	PathsPerHost       = 5
	ServicesPerIngress = HostsPerIngress * PathsPerHost
	EndpointsPerSlice  = 10

	// ClassName and Controller are the IngressClass the control plane
	// under test must serve.
	ClassName  = "ingress-xds"
	Controller = "ingress-xds.io/controller"

	servicePort = 80
	targetPort  = 8080
	portName    = "http"
	// addressesPerService is the block of endpoint addresses reserved for
	// each Service: EndpointsPerSlice at the start, the rest for the
	// endpoints that endpoint-change samples add.
	addressesPerService = 16
)

// endpointBase is where endpoint addresses start. Nothing is ever sent to
// them: 10.0.0.0/8 holds the million addresses of 10,000 Ingresses, and
// addresses the API server accepts (it refuses loopback).
var endpointBase = netip.MustParseAddr("10.0.0.0")

// Workload is N Ingresses and what they route to, in one namespace.
type Workload struct {
	N         int
	Namespace string
	// Headless makes the Services headless (clusterIP: None), sparing the
	// API server one IP allocation per Service. The control plane reads
	// EndpointSlices either way.
	Headless bool
	// AnnotatedEvery, when above zero, gives every AnnotatedEvery-th
	// Ingress (4: a quarter of them) one of the sets of ingress-nginx
	// annotations in annotationMix, in turn: the shapes of config users
	// bring, at the same counts of routes, clusters and endpoints.
	AnnotatedEvery int
	// GatewayAPI makes the workload Gateway API's: in place of each
	// Ingress, an HTTPRoute per host on one Gateway (gatewayapi.go), the
	// same hosts, paths, Services and EndpointSlices.
	GatewayAPI bool
}

// annotationMix are the sets of ingress-nginx annotations annotated
// Ingresses carry, in turn. None changes the number of clusters or load
// assignments, which convergence counts.
var annotationMix = []map[string]string{
	{"nginx.ingress.kubernetes.io/rewrite-target": "/"},
	{"nginx.ingress.kubernetes.io/use-regex": "true", "nginx.ingress.kubernetes.io/rewrite-target": "/$1", "nginx.ingress.kubernetes.io/x-forwarded-prefix": "/app"},
	{"nginx.ingress.kubernetes.io/proxy-read-timeout": "120", "nginx.ingress.kubernetes.io/proxy-send-timeout": "120", "nginx.ingress.kubernetes.io/proxy-body-size": "8m"},
	{"nginx.ingress.kubernetes.io/proxy-next-upstream": "error timeout http_502", "nginx.ingress.kubernetes.io/proxy-next-upstream-tries": "2"},
}

// Annotations returns the annotations of workload Ingress i: nil unless
// AnnotatedEvery picks it.
func (w Workload) Annotations(i int) map[string]string {
	if w.AnnotatedEvery <= 0 || i%w.AnnotatedEvery != 0 {
		return nil
	}
	return annotationMix[(i/w.AnnotatedEvery)%len(annotationMix)]
}

// Services is how many Services (and EndpointSlices) the workload has.
func (w Workload) Services() int { return w.N * ServicesPerIngress }

// Objects is how many objects the workload creates, namespace and
// IngressClass included (and the GatewayClass and Gateway of a Gateway
// API workload).
func (w Workload) Objects() int {
	if w.GatewayAPI {
		return 4 + w.N*HostsPerIngress + 2*w.Services()
	}
	return 2 + w.N + 2*w.Services()
}

// IngressName names workload Ingress i.
func IngressName(i int) string { return fmt.Sprintf("ing-%05d", i) }

// ServiceName names workload Service s.
func ServiceName(s int) string { return fmt.Sprintf("svc-%06d", s) }

// SliceName names the one EndpointSlice of Service s.
func SliceName(s int) string { return ServiceName(s) + "-1" }

// Host returns host h (0 <= h < HostsPerIngress) of Ingress i.
func Host(i, h int) string { return fmt.Sprintf("%s-%c.load.test", IngressName(i), 'a'+h) }

// Path returns path p of every host.
func Path(p int) string { return fmt.Sprintf("/p%d", p) }

// ServiceOf returns the Service behind path p of host h of Ingress i.
func ServiceOf(i, h, p int) int { return i*ServicesPerIngress + h*PathsPerHost + p }

// EndpointAddress returns endpoint j (1 <= j < 16) of Service s: every
// address of the workload is distinct, so an address identifies the load
// assignment holding it whatever the control plane names it.
func EndpointAddress(s, j int) string {
	if j < 1 || j >= addressesPerService {
		panic(fmt.Sprintf("endpoint %d out of range", j))
	}
	a := endpointBase.As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n += uint32(s*addressesPerService + j)
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
}

// AllHosts returns every host of the workload.
func (w Workload) AllHosts() []string {
	hosts := make([]string, 0, w.N*HostsPerIngress)
	for i := range w.N {
		for h := range HostsPerIngress {
			hosts = append(hosts, Host(i, h))
		}
	}
	return hosts
}

// NamespaceObject is the workload's namespace.
func (w Workload) NamespaceObject() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Namespace}}
}

// IngressClass is the class every workload Ingress names.
func IngressClass() *networkingv1.IngressClass {
	return &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: ClassName},
		Spec:       networkingv1.IngressClassSpec{Controller: Controller},
	}
}

// Service returns Service s. It has no selector: its EndpointSlice is ours
// to write, and no endpoint controller of a real cluster touches it.
func (w Workload) Service(s int) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(s), Namespace: w.Namespace},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name:       portName,
			Protocol:   corev1.ProtocolTCP,
			Port:       servicePort,
			TargetPort: intstr.FromInt32(targetPort),
		}}},
	}
	if w.Headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	return svc
}

// EndpointSlice returns the slice of Service s with endpoints 1..count
// (count EndpointsPerSlice in the workload), all ready.
func (w Workload) EndpointSlice(s, count int) *discoveryv1.EndpointSlice {
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      SliceName(s),
			Namespace: w.Namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: ServiceName(s)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{
			Name:     ptr.To(portName),
			Protocol: ptr.To(corev1.ProtocolTCP),
			Port:     ptr.To(int32(targetPort)),
		}},
	}
	for j := 1; j <= count; j++ {
		slice.Endpoints = append(slice.Endpoints, Endpoint(s, j))
	}
	return slice
}

// Endpoint returns endpoint j of Service s, ready.
func Endpoint(s, j int) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  []string{EndpointAddress(s, j)},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
	}
}

// Ingress returns workload Ingress i.
func (w Workload) Ingress(i int) *networkingv1.Ingress {
	hosts := make([]string, HostsPerIngress)
	for h := range hosts {
		hosts[h] = Host(i, h)
	}
	ing := w.ingress(IngressName(i), hosts, i)
	if ann := w.Annotations(i); ann != nil {
		ing.Annotations = make(map[string]string, len(ann))
		for k, v := range ann {
			ing.Annotations[k] = v
		}
	}
	return ing
}

// ChangeIngress returns the Ingress that Ingress-change sample k creates:
// shaped as a workload Ingress, with new hosts (unique to run, so that runs
// against one cluster do not collide), routing to the Services of workload
// Ingress backendsOf.
func (w Workload) ChangeIngress(run string, k, backendsOf int) *networkingv1.Ingress {
	name := fmt.Sprintf("chg-%s-%03d", run, k)
	hosts := make([]string, HostsPerIngress)
	for h := range hosts {
		hosts[h] = fmt.Sprintf("%s-%c.load.test", name, 'a'+h)
	}
	return w.ingress(name, hosts, backendsOf)
}

// ingress routes path p of host h to Service ServiceOf(backendsOf, h, p).
func (w Workload) ingress(name string, hosts []string, backendsOf int) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace},
		Spec:       networkingv1.IngressSpec{IngressClassName: ptr.To(ClassName)},
	}
	for h, host := range hosts {
		rule := networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}
		for p := range PathsPerHost {
			rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{
				Path:     Path(p),
				PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: ServiceName(ServiceOf(backendsOf, h, p)),
					Port: networkingv1.ServiceBackendPort{Number: servicePort},
				}},
			})
		}
		ing.Spec.Rules = append(ing.Spec.Rules, rule)
	}
	return ing
}

// State is the workload as the translator sees it, without an API server:
// for benchmarks of translation and publishing.
func (w Workload) State() *kube.State {
	var objs kube.Objects
	for i := 0; i < w.N; i++ {
		objs.Ingresses = append(objs.Ingresses, w.Ingress(i))
	}
	for s := 0; s < w.Services(); s++ {
		objs.Services = append(objs.Services, w.Service(s))
		objs.EndpointSlices = append(objs.EndpointSlices, w.EndpointSlice(s, EndpointsPerSlice))
	}
	return objs.State(kube.ClassFilter{WatchClassless: true})
}

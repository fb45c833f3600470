package kube

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EndpointSlice is what the translator reads of a discovery.k8s.io/v1
// EndpointSlice: the Service it belongs to, its address type and ports, and
// the addresses of its ready endpoints. Sources keep this rather than the
// API object: at 10,000 Ingresses there are 100,000 slices with a million
// endpoints, and the API objects, even trimmed, were the largest part of
// the heap, and much larger than this (docs/benchmarks.md,
// "Optimisations", 18, and "Memory").
type EndpointSlice struct {
	Namespace, Name string
	// Service is the kubernetes.io/service-name label: the Service the
	// slice belongs to, or "" for none.
	Service     string
	AddressType discoveryv1.AddressType
	Ports       []EndpointPort
	// Ready holds the addresses of the endpoints that are ready (a ready
	// condition that is true or unset; terminating endpoints report
	// false), every address of each, in the slice's order.
	Ready []string
	// AnyPort marks the addresses of an ExternalName Service, resolved by
	// the control plane (ResolvingSource): each serves every port of the
	// Service, at that port; Ports is empty.
	AnyPort bool
}

// EndpointPort is one port of an EndpointSlice.
type EndpointPort struct {
	Name     string
	Port     int32           // 0 when unset
	Protocol corev1.Protocol // "" when unset, which means TCP
}

// NewEndpointSlice keeps what the translator reads of an API EndpointSlice.
func NewEndpointSlice(es *discoveryv1.EndpointSlice) *EndpointSlice {
	out := &EndpointSlice{
		Namespace:   es.Namespace,
		Name:        es.Name,
		Service:     es.Labels[discoveryv1.LabelServiceName],
		AddressType: es.AddressType,
		Ports:       make([]EndpointPort, len(es.Ports)),
	}
	for i, p := range es.Ports {
		if p.Name != nil {
			out.Ports[i].Name = *p.Name
		}
		if p.Port != nil {
			out.Ports[i].Port = *p.Port
		}
		if p.Protocol != nil {
			out.Ports[i].Protocol = protocol(*p.Protocol)
		}
	}
	n := 0
	for _, ep := range es.Endpoints {
		if ready(ep) {
			n += len(ep.Addresses)
		}
	}
	out.Ready = make([]string, 0, n)
	for _, ep := range es.Endpoints {
		if ready(ep) {
			out.Ready = append(out.Ready, ep.Addresses...)
		}
	}
	return out
}

// ready follows the API's contract: an unset ready condition means ready.
func ready(ep discoveryv1.Endpoint) bool {
	return ep.Conditions.Ready == nil || *ep.Conditions.Ready
}

// ServiceName returns the Service the slice belongs to, and false when it
// carries no service-name label (it then belongs to nobody we route to).
func (s *EndpointSlice) ServiceName() (types.NamespacedName, bool) {
	if s.Service == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Service}, true
}

// GetObjectMeta gives informer caches the namespace and name to key the
// slice by (client-go's meta.Accessor accepts an ObjectMetaAccessor).
func (s *EndpointSlice) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}
}

// Service is what the translator reads of a Service: its type, external
// name and ports. Sources keep this rather than the API object, with its
// metadata and spec several times the size (docs/benchmarks.md,
// "Optimisations", 21), for the same reason as EndpointSlice: 100,000 of
// them at 10,000 Ingresses.
type Service struct {
	Namespace, Name string
	Type            corev1.ServiceType
	ExternalName    string
	// ClusterIP is the Service's virtual address ("None" when headless,
	// empty for ExternalName), which service-upstream sends to.
	ClusterIP string
	Ports     []ServicePort
	// Resolved is, for an ExternalName Service, the control plane's
	// verdict on its name (ResolvingSource); nil when nothing resolves
	// names for the translator.
	Resolved *Resolution
}

// ServicePort is what the translator reads of a Service port: well under
// half the API's, which adds target and node ports and app protocol
// (docs/benchmarks.md, "The memory round", 29), and the translator keeps
// one per backend too.
type ServicePort struct {
	Name     string
	Port     int32
	Protocol corev1.Protocol // "" when unset, which means TCP
	// AppProtocol is the port's appProtocol ("" when unset): Gateway API
	// reads kubernetes.io/h2c as HTTP/2 in clear text.
	AppProtocol string
}

// NewService keeps what the translator reads of an API Service.
func NewService(svc *corev1.Service) *Service {
	out := &Service{
		Namespace:    svc.Namespace,
		Name:         svc.Name,
		Type:         svc.Spec.Type,
		ExternalName: svc.Spec.ExternalName,
		ClusterIP:    svc.Spec.ClusterIP,
		Ports:        make([]ServicePort, len(svc.Spec.Ports)),
	}
	for i, p := range svc.Spec.Ports {
		out.Ports[i] = ServicePort{Name: p.Name, Port: p.Port, Protocol: protocol(p.Protocol)}
		if p.AppProtocol != nil {
			out.Ports[i].AppProtocol = *p.AppProtocol
		}
	}
	return out
}

// protocol returns the protocol's constant: decoding allocates a string
// for each "TCP", and there are 100,000 Service ports at 10,000 Ingresses.
func protocol(p corev1.Protocol) corev1.Protocol {
	for _, known := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP} {
		if p == known {
			return known
		}
	}
	return p
}

// GetObjectMeta gives informer caches the namespace and name to key the
// Service by.
func (s *Service) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}
}

package load

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// The kinds of change the Envoy phase times. Each is timed from just
// before its one API request until Envoy answers a request with the
// backend the change names:
//
//   - host: a new Ingress with a new host (a virtual host added);
//   - path: a new Ingress adding a path to a host that exists (a route
//     added to a virtual host);
//   - backend: an Ingress's path switched to another Service, one Envoy
//     has no cluster of yet (a cluster and its endpoints added, the old
//     one removed, a route changed);
//   - endpoint: a Service's EndpointSlice moved to the other backend
//     (a load assignment changed: traffic shifts, nothing else).
const (
	KindHost     = "host"
	KindPath     = "path"
	KindBackend  = "backend"
	KindEndpoint = "endpoint"
)

// AllKinds is the default of -envoy-kinds, in the order they take turns.
var AllKinds = []string{KindHost, KindPath, KindBackend, KindEndpoint}

// ParseKinds reads a comma-separated list of kinds.
func ParseKinds(s string) ([]string, error) {
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		switch k {
		case KindHost, KindPath, KindBackend, KindEndpoint:
			out = append(out, k)
		case "":
		default:
			return nil, fmt.Errorf("unknown kind of change %q (want %s)", k, strings.Join(AllKinds, ", "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no kind of change in %q", s)
	}
	return out, nil
}

// target is what Envoy must serve for a change to count as served.
type target struct {
	host, path string
	backend    string // the name the backend answers with (X-Backend)
}

// envoyKind is one kind of change, its objects created by setup before
// Envoy starts.
type envoyKind struct {
	name string
	// warm is served before the first sample: the kind's objects are
	// in Envoy and its request path is hot.
	warm target
	// change sends change k's one API request and returns what Envoy must
	// then serve.
	change func(ctx context.Context, k int) (target, error)
	// adsHost, when set, is the host the load command's ADS client must
	// see routed for change k (the host kind only).
	adsHost func(k int) string
}

// backends are the two backend processes of the phase, on two ports of
// the namespace's address: changes of the backend and endpoint kinds
// alternate between them, so that a shift is seen in the answer.
type backends struct {
	a, b *backendServer
}

// other is the backend change k moves to: b for even k (from a, where
// each kind starts), a for odd.
func (bs backends) other(k int) *backendServer {
	if k%2 == 0 {
		return bs.b
	}
	return bs.a
}

// setupKinds creates the objects of the kinds asked for, n changes each,
// and returns them in the order given.
func (o envoyObjects) setupKinds(ctx context.Context, s *session, names []string, n int, bs backends) ([]envoyKind, error) {
	ings := s.kube.NetworkingV1().Ingresses(o.w.Namespace)
	var out []envoyKind
	for _, name := range names {
		var k envoyKind
		k.name = name
		switch name {
		case KindHost:
			k.warm = target{o.host("warm"), "/", bs.a.name}
			if _, err := ings.Create(ctx, o.ingressTo("warm", o.host("warm"), "/", o.service()), metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating the warm-up Ingress: %w", err)
			}
			k.adsHost = func(i int) string { return o.host(strconv.Itoa(i)) }
			k.change = func(ctx context.Context, i int) (target, error) {
				name := strconv.Itoa(i)
				_, err := ings.Create(ctx, o.ingressTo(name, o.host(name), "/", o.service()), metav1.CreateOptions{})
				return target{o.host(name), "/", bs.a.name}, err
			}
		case KindPath:
			host := o.host("paths")
			k.warm = target{host, "/base", bs.a.name}
			if _, err := ings.Create(ctx, o.ingressTo("paths", host, "/base", o.service()), metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating the Ingress of the path changes: %w", err)
			}
			k.change = func(ctx context.Context, i int) (target, error) {
				path := "/p-" + strconv.Itoa(i)
				_, err := ings.Create(ctx, o.ingressTo("path-"+strconv.Itoa(i), host, path, o.service()), metav1.CreateOptions{})
				return target{host, path, bs.a.name}, err
			}
		case KindBackend:
			// One Service per change, created now: no Ingress routes
			// to it until its change, so Envoy has no cluster of it.
			for i := range n {
				if err := o.createService(ctx, s, o.switchService(i), bs.other(i).port); err != nil {
					return nil, err
				}
			}
			host := o.host("switch")
			k.warm = target{host, "/", bs.a.name}
			if _, err := ings.Create(ctx, o.ingressTo("switch", host, "/", o.service()), metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating the Ingress of the backend changes: %w", err)
			}
			// A patch, not an update: the control plane writes the
			// Ingress's status meanwhile, which would make an update of
			// the version read conflict.
			k.change = func(ctx context.Context, i int) (target, error) {
				_, err := ings.Patch(ctx, o.ingressName("switch"), types.JSONPatchType,
					jsonReplace("/spec/rules/0/http/paths/0/backend/service/name", o.switchService(i)), metav1.PatchOptions{})
				return target{host, "/", bs.other(i).name}, err
			}
		case KindEndpoint:
			svc := o.endpointService()
			if err := o.createService(ctx, s, svc, bs.a.port); err != nil {
				return nil, err
			}
			slices := s.kube.DiscoveryV1().EndpointSlices(o.w.Namespace)
			host := o.host("endpoints")
			k.warm = target{host, "/", bs.a.name}
			if _, err := ings.Create(ctx, o.ingressTo("endpoints", host, "/", svc), metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("creating the Ingress of the endpoint changes: %w", err)
			}
			k.change = func(ctx context.Context, i int) (target, error) {
				_, err := slices.Patch(ctx, svc+"-1", types.JSONPatchType,
					jsonReplace("/ports/0/port", bs.other(i).port), metav1.PatchOptions{})
				return target{host, "/", bs.other(i).name}, err
			}
		}
		out = append(out, k)
	}
	return out, nil
}

func (o envoyObjects) service() string            { return "backend-" + o.run }
func (o envoyObjects) switchService(i int) string { return fmt.Sprintf("switch-%s-%d", o.run, i) }
func (o envoyObjects) endpointService() string    { return "endpoints-" + o.run }

// host returns the host of the Ingress called name ("warm", "0", "1" ...).
func (o envoyObjects) host(name string) string {
	return fmt.Sprintf("envoy-%s-%s.load.test", o.run, name)
}

func (o envoyObjects) ingressName(name string) string { return fmt.Sprintf("envoy-%s-%s", o.run, name) }

// ingressTo is Ingress name with one rule: host, path (Prefix) to svc.
func (o envoyObjects) ingressTo(name, host, path, svc string) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: o.ingressName(name), Namespace: o.w.Namespace},
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To(ClassName),
			Rules: []networkingv1.IngressRule{{
				Host: host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     path,
						PathType: ptr.To(networkingv1.PathTypePrefix),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: svc,
							Port: networkingv1.ServiceBackendPort{Number: servicePort},
						}},
					}},
				}},
			}},
		},
	}
}

// jsonReplace is a JSON patch of one replace operation.
func jsonReplace(path string, value any) []byte {
	patch, err := json.Marshal([]map[string]any{{"op": "replace", "path": path, "value": value}})
	if err != nil {
		panic(err) // a string or an int always encodes
	}
	return patch
}

// createService creates headless Service name with one EndpointSlice,
// name-1, of the namespace's address at port.
func (o envoyObjects) createService(ctx context.Context, s *session, name string, port int) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.w.Namespace},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{
				Name: portName, Protocol: corev1.ProtocolTCP,
				Port: servicePort, TargetPort: intstr.FromInt32(int32(port)),
			}},
		},
	}
	if _, err := s.kube.CoreV1().Services(o.w.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Service %s: %w", name, err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name + "-1",
			Namespace: o.w.Namespace,
			Labels:    map[string]string{discoveryv1.LabelServiceName: name},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{
			Name:     ptr.To(portName),
			Protocol: ptr.To(corev1.ProtocolTCP),
			Port:     ptr.To(int32(port)),
		}},
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{o.backendIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
	}
	if _, err := s.kube.DiscoveryV1().EndpointSlices(o.w.Namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the EndpointSlice of %s: %w", name, err)
	}
	return nil
}

// cleanUp deletes the phase's objects from a cluster that outlives the
// run. Failures are only logged.
func (o envoyObjects) cleanUp(ctx context.Context, s *session, count int) {
	ingresses := []string{"warm", "paths", "switch", "endpoints"}
	services := []string{o.service(), o.endpointService()}
	for k := range count {
		ingresses = append(ingresses, strconv.Itoa(k), "path-"+strconv.Itoa(k))
		services = append(services, o.switchService(k))
	}
	var errs []error
	for _, name := range ingresses {
		err := s.kube.NetworkingV1().Ingresses(o.w.Namespace).Delete(ctx, o.ingressName(name), metav1.DeleteOptions{})
		errs = append(errs, ignoreNotFound(err))
	}
	for _, name := range services {
		errs = append(errs,
			ignoreNotFound(s.kube.DiscoveryV1().EndpointSlices(o.w.Namespace).Delete(ctx, name+"-1", metav1.DeleteOptions{})),
			ignoreNotFound(s.kube.CoreV1().Services(o.w.Namespace).Delete(ctx, name, metav1.DeleteOptions{})))
	}
	for _, err := range errs {
		if err != nil {
			s.log.Warn("deleting the Envoy phase's objects", "err", err)
			return
		}
	}
}

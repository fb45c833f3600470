package kube

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The labels and annotation of the Services GatewayServices keeps.
const (
	// GatewayServiceLabel marks them, so that one whose Gateway is gone
	// is found and deleted.
	GatewayServiceLabel = "ingress-xds.io/gateway-service"
	// GatewayServiceAnnotation names the Gateway (namespace/name), which
	// a label value cannot hold whole.
	GatewayServiceAnnotation = "ingress-xds.io/gateway"
)

// GatewayServices keeps a Service per Gateway served on Envoy ports of its
// own (the Gateway API front-end's own addresses): in the Envoys'
// namespace, since a Service selects the pods of its own namespace, it
// sends each of the Gateway's listener ports to that port's Envoy port on
// every Envoy pod, and its address is the Gateway's. Only the leader
// writes, as for status.
type GatewayServices struct {
	Client kubernetes.Interface
	// Namespace is the Envoys'; Selector their pods' labels.
	Namespace string
	Selector  map[string]string
	// Type is the Services' type: LoadBalancer where the cloud gives
	// addresses, ClusterIP for Gateways reached in the cluster.
	Type   corev1.ServiceType
	Logger *slog.Logger

	// Set by Watch: the Services and their EndpointSlices (which carry
	// their Service's labels), so that an address or an Envoy arriving
	// later is seen without asking the API server again.
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
}

// GatewayServiceName is the Service of a Gateway (namespace/name): a
// DNS label of the Gateway's name and a hash of its whole key, so that
// two Gateways of one name in two namespaces have two.
func GatewayServiceName(gateway string) string {
	h := fnv.New32a()
	h.Write([]byte(gateway))
	_, name, _ := strings.Cut(gateway, "/")
	name = strings.ReplaceAll(strings.ToLower(name), ".", "-")
	const prefix, most = "gateway-", 63 - len("gateway-") - 9
	if len(name) > most {
		name = name[:most]
	}
	return prefix + strings.TrimRight(name, "-") + "-" + strconv.FormatUint(uint64(h.Sum32()), 36)
}

// GatewayService is what a Gateway's Service is made of: each listener
// port's Envoy port, and the IP addresses its spec.addresses asks for, in
// order, of which the Service takes the first the API server (ClusterIP)
// or load balancer (LoadBalancer) grants.
type GatewayService struct {
	Ports     map[uint32]uint32
	Addresses []string
	// Labels and Annotations are the Gateway's spec.infrastructure's,
	// which Gateway API asks be put on what is made for the Gateway: a
	// cloud's load-balancer annotations, a team's labels.
	Labels, Annotations map[string]string
}

// Sync makes the Services those of want, by Gateway (namespace/name). Each
// Service is written on its own, so one that fails does not keep the
// others from being written; the errors are joined.
func (s *GatewayServices) Sync(ctx context.Context, want map[string]GatewayService) error {
	services := s.Client.CoreV1().Services(s.Namespace)
	list, err := services.List(ctx, metav1.ListOptions{LabelSelector: GatewayServiceLabel + "=true"})
	if err != nil {
		return fmt.Errorf("listing the Gateways' Services: %w", err)
	}
	have := map[string]*corev1.Service{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	var errs []error
	wanted := map[string]bool{}
	for _, gateway := range slices.Sorted(maps.Keys(want)) {
		svc := s.service(gateway, want[gateway])
		wanted[svc.Name] = true
		cur := have[svc.Name]
		if cur != nil && s.repin(cur, want[gateway].Addresses) {
			// A cluster IP cannot change: the Service is made again.
			if err := services.Delete(ctx, cur.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("deleting Service %s/%s of Gateway %s for another cluster IP: %w", s.Namespace, svc.Name, gateway, err))
				continue
			}
			cur = nil
		}
		switch {
		case cur == nil:
			if err := s.create(ctx, svc, want[gateway].Addresses); err != nil {
				errs = append(errs, fmt.Errorf("creating Service %s/%s of Gateway %s: %w", s.Namespace, svc.Name, gateway, err))
				continue
			}
			s.logger().Info("made a Gateway's Service", "service", svc.Name, "gateway", gateway)
		case !sameServiceSpec(cur, svc):
			next := cur.DeepCopy()
			next.Spec.Type, next.Spec.Selector, next.Spec.Ports = svc.Spec.Type, svc.Spec.Selector, svc.Spec.Ports
			next.Spec.LoadBalancerIP = svc.Spec.LoadBalancerIP
			next.Labels, next.Annotations = withMetadata(cur, svc)
			if _, err := services.Update(ctx, next, metav1.UpdateOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("updating Service %s/%s of Gateway %s: %w", s.Namespace, svc.Name, gateway, err))
			}
		}
	}
	for name := range have {
		if wanted[name] {
			continue
		}
		if err := services.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting Service %s/%s of a Gateway gone: %w", s.Namespace, name, err))
			continue
		}
		s.logger().Info("deleted the Service of a Gateway gone", "service", name)
	}
	return errors.Join(errs...)
}

// create makes a Gateway's Service; of a ClusterIP type, with the first
// of the addresses asked for that the API server grants (one outside the
// Service network, or taken, is refused), else with one it chooses: the
// Gateway is then told its addresses are not usable.
func (s *GatewayServices) create(ctx context.Context, svc *corev1.Service, asked []string) error {
	services := s.Client.CoreV1().Services(s.Namespace)
	if svc.Spec.Type == corev1.ServiceTypeClusterIP {
		for _, ip := range asked {
			pinned := svc.DeepCopy()
			pinned.Spec.ClusterIP = ip
			_, err := services.Create(ctx, pinned, metav1.CreateOptions{})
			switch {
			case err == nil || apierrors.IsAlreadyExists(err):
				return nil
			case !apierrors.IsInvalid(err):
				return err
			}
			s.logger().Info("a Gateway's address cannot be its Service's cluster IP", "service", svc.Name,
				"gateway", svc.Annotations[GatewayServiceAnnotation], "address", ip, "err", err)
		}
	}
	if _, err := services.Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// repin says whether a ClusterIP Service is to be made again for
// addresses asked anew: its cluster IP is none of them, and it was not
// made for these very ones (which the API server refused then).
func (s *GatewayServices) repin(cur *corev1.Service, asked []string) bool {
	return cur.Spec.Type == corev1.ServiceTypeClusterIP && s.Type == corev1.ServiceTypeClusterIP && len(asked) > 0 &&
		!slices.Contains(asked, cur.Spec.ClusterIP) && cur.Annotations[gatewayAddressesAnnotation] != strings.Join(asked, ",")
}

// gatewayAddressesAnnotation records the addresses a Service was made
// for, so that those the API server refused are not asked again.
const gatewayAddressesAnnotation = "ingress-xds.io/gateway-addresses"

// service is the Service a Gateway wants.
func (s *GatewayServices) service(gateway string, want GatewayService) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: GatewayServiceName(gateway), Namespace: s.Namespace,
			Labels:      map[string]string{GatewayServiceLabel: "true"},
			Annotations: map[string]string{GatewayServiceAnnotation: gateway}},
		Spec: corev1.ServiceSpec{Type: s.Type, Selector: s.Selector},
	}
	// Ours are set last: a Gateway's cannot take them over.
	maps.Copy(svc.Labels, want.Labels)
	svc.Labels[GatewayServiceLabel] = "true"
	if _, name, _ := strings.Cut(gateway, "/"); len(name) <= validation.LabelValueMaxLength {
		// Gateway API's label for what is made for a Gateway.
		svc.Labels[gwapiv1.GatewayNameLabelKey] = name
	}
	maps.Copy(svc.Annotations, want.Annotations)
	svc.Annotations[GatewayServiceAnnotation] = gateway
	if keys := infrastructureKeys(want); keys != "" {
		svc.Annotations[gatewayInfrastructureAnnotation] = keys
	}
	if len(want.Addresses) > 0 {
		svc.Annotations[gatewayAddressesAnnotation] = strings.Join(want.Addresses, ",")
		if s.Type == corev1.ServiceTypeLoadBalancer {
			// Deprecated in the API, still what load balancers read; the
			// status tells whether it was granted.
			svc.Spec.LoadBalancerIP = want.Addresses[0]
		}
	}
	ports := want.Ports
	for _, port := range slices.Sorted(maps.Keys(ports)) {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: "port-" + strconv.FormatUint(uint64(port), 10), Protocol: corev1.ProtocolTCP,
			Port: int32(port), TargetPort: intstr.FromInt32(int32(ports[port])),
		})
	}
	return svc
}

// gatewayInfrastructureAnnotation lists the labels and annotations a
// Service carries for its Gateway's spec.infrastructure, so that one the
// Gateway no longer asks for is taken off, and those others (a cloud
// controller) put on the Service are left alone.
const gatewayInfrastructureAnnotation = "ingress-xds.io/gateway-infrastructure"

// infrastructureKeys is that annotation's value: label:KEY and
// annotation:KEY, sorted, comma-separated.
func infrastructureKeys(want GatewayService) string {
	var keys []string
	for k := range want.Labels {
		keys = append(keys, "label:"+k)
	}
	for k := range want.Annotations {
		keys = append(keys, "annotation:"+k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// withMetadata is cur's labels and annotations made want's, in what is
// ours: those the Gateway no longer asks for taken off, others' kept.
func withMetadata(cur, want *corev1.Service) (labels, annotations map[string]string) {
	labels, annotations = maps.Clone(cur.Labels), maps.Clone(cur.Annotations)
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	for _, key := range strings.Split(cur.Annotations[gatewayInfrastructureAnnotation], ",") {
		if k, ok := strings.CutPrefix(key, "label:"); ok {
			delete(labels, k)
		} else if k, ok := strings.CutPrefix(key, "annotation:"); ok {
			delete(annotations, k)
		}
	}
	delete(annotations, gatewayInfrastructureAnnotation)
	delete(annotations, gatewayAddressesAnnotation)
	maps.Copy(labels, want.Labels)
	maps.Copy(annotations, want.Annotations)
	return labels, annotations
}

// sameServiceSpec says whether a Service is as wanted, in what is ours to
// set (the API server fills in the rest: node ports, cluster IPs; other
// controllers may add labels and annotations).
func sameServiceSpec(cur, want *corev1.Service) bool {
	labels, annotations := withMetadata(cur, want)
	if cur.Spec.Type != want.Spec.Type || !maps.Equal(cur.Spec.Selector, want.Spec.Selector) ||
		!maps.Equal(labels, cur.Labels) || !maps.Equal(annotations, cur.Annotations) ||
		cur.Spec.LoadBalancerIP != want.Spec.LoadBalancerIP || len(cur.Spec.Ports) != len(want.Spec.Ports) {
		return false
	}
	for i, p := range want.Spec.Ports {
		c := cur.Spec.Ports[i]
		if c.Name != p.Name || c.Port != p.Port || c.TargetPort != p.TargetPort || c.Protocol != p.Protocol {
			return false
		}
	}
	return true
}

// GatewayServiceAddresses are a Gateway's Service's addresses: its load
// balancer's, else, of a ClusterIP Service, its cluster IP.
func GatewayServiceAddresses(svc *corev1.Service) []string {
	var out []string
	for _, in := range svc.Status.LoadBalancer.Ingress {
		switch {
		case in.IP != "":
			out = append(out, in.IP)
		case in.Hostname != "":
			out = append(out, in.Hostname)
		}
	}
	if len(out) == 0 && svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		out = append(out, svc.Spec.ClusterIP)
	}
	return out
}

// Watch follows the Services and their EndpointSlices until ctx ends,
// calling changed with the Gateway (namespace/name) of each one that
// changes: a load balancer's address and the first ready Envoy come after
// the Service is made, and the Gateway's status waits for both. It
// returns once the caches are synced.
func (s *GatewayServices) Watch(ctx context.Context, changed func(gateway string)) error {
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0, informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = GatewayServiceLabel + "=true" }))
	services := factory.Core().V1().Services()
	slices := factory.Discovery().V1().EndpointSlices()
	gatewayOf := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		switch o := obj.(type) {
		case *corev1.Service:
			return o.Annotations[GatewayServiceAnnotation]
		case metav1.Object:
			svc, err := services.Lister().Services(s.Namespace).Get(o.GetLabels()["kubernetes.io/service-name"])
			if err == nil {
				return svc.Annotations[GatewayServiceAnnotation]
			}
		}
		return ""
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.notify(changed, gatewayOf(obj)) },
		UpdateFunc: func(_, obj any) { s.notify(changed, gatewayOf(obj)) },
		DeleteFunc: func(obj any) { s.notify(changed, gatewayOf(obj)) },
	}
	for _, inf := range []cache.SharedIndexInformer{services.Informer(), slices.Informer()} {
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watching the Gateways' Services: %w", err)
		}
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("the Gateways' Services: %v not synced: %w", typ, ctx.Err())
		}
	}
	s.services, s.slices = services.Lister(), slices.Lister()
	return nil
}

func (s *GatewayServices) notify(changed func(string), gateway string) {
	if gateway != "" {
		changed(gateway)
	}
}

// Addresses are a Gateway's addresses, once its Service has them and an
// Envoy ready behind it; until then, pending says what it waits for. A
// client's first packets to an address no proxy forwards yet are lost,
// and its retries with them (conntrack keeps the first packet's fate):
// hence the wait for a ready endpoint. Watch must have returned.
func (s *GatewayServices) Addresses(gateway string) (addresses []string, pending string, err error) {
	if s.services == nil {
		return nil, "", errors.New("the Gateways' Services are not watched")
	}
	name := GatewayServiceName(gateway)
	svc, err := s.services.Services(s.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, "its Service " + s.Namespace + "/" + name + " is not made yet", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("the Service of Gateway %s: %w", gateway, err)
	}
	list, err := s.slices.EndpointSlices(s.Namespace).List(labels.SelectorFromSet(labels.Set{"kubernetes.io/service-name": name}))
	if err != nil {
		return nil, "", fmt.Errorf("the endpoints of Gateway %s's Service: %w", gateway, err)
	}
	ready := false
	for _, es := range list {
		for _, ep := range es.Endpoints {
			ready = ready || ep.Conditions.Ready == nil || *ep.Conditions.Ready
		}
	}
	if !ready {
		return nil, "no Envoy is ready behind its Service " + s.Namespace + "/" + name, nil
	}
	if addresses = GatewayServiceAddresses(svc); len(addresses) == 0 {
		return nil, "its Service " + s.Namespace + "/" + name + " has no address yet (type " + string(svc.Spec.Type) + ")", nil
	}
	return addresses, "", nil
}

func (s *GatewayServices) logger() *slog.Logger { return loggerOr(s.Logger) }

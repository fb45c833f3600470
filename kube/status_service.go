package kube

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ServiceAddresses is the AddressSource of --envoy-service: the
// status.loadBalancer of the Service (typically of type LoadBalancer) in
// front of the Envoys, as the cloud provider fills it in.
type ServiceAddresses struct {
	Client  kubernetes.Interface
	Service types.NamespacedName
	Logger  *slog.Logger

	addresses addressTracker
}

var _ AddressSource = (*ServiceAddresses)(nil)

// Run implements AddressSource. It watches that one Service only: the field
// selector makes the API server send nothing else.
func (s *ServiceAddresses) Run(ctx context.Context, changed func()) error {
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithNamespace(s.Service.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", s.Service.Name).String()
		}),
		informers.WithTransform(trimServiceForStatus))
	informer := factory.Core().V1().Services().Informer()
	lister := factory.Core().V1().Services().Lister()

	// Every event recomputes from the lister, and only once the cache is
	// whole: before that the Service may be missing from it, which would
	// read as "no addresses".
	update := func() {
		changedNow, _ := s.addresses.refresh(func() ([]networkingv1.IngressLoadBalancerIngress, error) {
			svc, err := lister.Services(s.Service.Namespace).Get(s.Service.Name)
			if err != nil {
				return nil, nil // not found: no addresses
			}
			return serviceAddresses(svc), nil
		})
		if changedNow {
			s.logger().Info("status addresses from service", "service", s.Service.String(), "addresses", formatAddresses(s.addresses.get()))
			changed()
		}
	}
	handler := onSyncedChange(informer.HasSynced, update)
	if _, err := informer.AddEventHandler(handler); err != nil {
		return fmt.Errorf("adding event handler: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("service %s: cache did not sync", s.Service)
	}
	update()
	<-ctx.Done()
	return nil
}

// Addresses implements AddressSource.
func (s *ServiceAddresses) Addresses() []networkingv1.IngressLoadBalancerIngress {
	return s.addresses.get()
}

func (s *ServiceAddresses) logger() *slog.Logger { return loggerOr(s.Logger) }

// serviceAddresses converts a Service's load-balancer status into Ingress
// status entries. Ports are left out: an Ingress is always reached on the
// standard HTTP and HTTPS ports, which is what peers publish too.
func serviceAddresses(svc *corev1.Service) []networkingv1.IngressLoadBalancerIngress {
	var list []networkingv1.IngressLoadBalancerIngress
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		if lb.IP == "" && lb.Hostname == "" {
			continue
		}
		list = append(list, networkingv1.IngressLoadBalancerIngress{IP: lb.IP, Hostname: lb.Hostname})
	}
	return normalizeAddresses(list)
}

// trimServiceForStatus keeps only what serviceAddresses reads.
func trimServiceForStatus(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace, ResourceVersion: svc.ResourceVersion},
		Status:     corev1.ServiceStatus{LoadBalancer: svc.Status.LoadBalancer},
	}, nil
}

// formatAddresses renders addresses for logs.
func formatAddresses(list []networkingv1.IngressLoadBalancerIngress) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.IP != "" {
			out = append(out, a.IP)
		} else {
			out = append(out, a.Hostname)
		}
	}
	return out
}

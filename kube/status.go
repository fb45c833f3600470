package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// StatusWriter writes the address where traffic enters into
// status.loadBalancer of the Ingresses we own.
type StatusWriter struct {
	Client    kubernetes.Interface
	Addresses []string // IPs or hostnames, from --status-address
	Logger    *slog.Logger
}

// LoadBalancerStatus turns addresses into an Ingress load-balancer status:
// IPs go to ip, anything else to hostname.
func LoadBalancerStatus(addresses []string) networkingv1.IngressLoadBalancerStatus {
	var st networkingv1.IngressLoadBalancerStatus
	for _, a := range addresses {
		if _, err := netip.ParseAddr(a); err == nil {
			st.Ingress = append(st.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
		} else {
			st.Ingress = append(st.Ingress, networkingv1.IngressLoadBalancerIngress{Hostname: a})
		}
	}
	return st
}

// Update writes the status of every Ingress whose status differs from the
// desired one, and skips the others. Errors on one Ingress do not stop the
// rest; they are all returned together.
func (w *StatusWriter) Update(ctx context.Context, ingresses []*networkingv1.Ingress) error {
	if len(w.Addresses) == 0 {
		return nil
	}
	want := LoadBalancerStatus(w.Addresses)
	var errs []error
	for _, ing := range ingresses {
		if apiequality.Semantic.DeepEqual(ing.Status.LoadBalancer, want) {
			continue
		}
		// Objects in State are shared with the informer cache: copy first.
		updated := ing.DeepCopy()
		updated.Status.LoadBalancer = want
		_, err := w.Client.NetworkingV1().Ingresses(ing.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{})
		switch {
		case err == nil:
			w.logger().Info("wrote ingress status", "ingress", ing.Namespace+"/"+ing.Name, "addresses", w.Addresses)
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Deleted or changed meanwhile: the informer will bring the new
			// version and another pass.
		default:
			errs = append(errs, fmt.Errorf("updating status of ingress %s/%s: %w", ing.Namespace, ing.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (w *StatusWriter) logger() *slog.Logger {
	if w.Logger == nil {
		return slog.Default()
	}
	return w.Logger
}

// Package kube turns a source of Kubernetes objects (a live cluster through
// shared informers, or manifests on disk) into State, the read-only view of the
// cluster that the translator works from. It also writes Ingress status.
package kube

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"
)

// State is one consistent view of the objects the translator needs. Sources
// fill it; nobody mutates it afterwards, so the objects may be shared with
// informer caches and must be treated as read-only. The same holds for its
// maps and its Ingress list: a source may hand the same map or list over
// again in the next State only if nothing in it changed (a changed part is a
// new map or list), and the translator relies on that to skip the parts of
// the cluster that did not change. Ingresses are unique by namespace and
// name.
//
// Ingresses holds only the Ingresses this controller owns: class ownership is
// decided here, at the edge, so that the translator and the status writer
// agree on it without the data flowing backwards.
type State struct {
	Ingresses []*networkingv1.Ingress
	Services  map[types.NamespacedName]*Service
	// EndpointSlices are grouped by the Service they belong to (the
	// kubernetes.io/service-name label).
	EndpointSlices map[types.NamespacedName][]*EndpointSlice
	// SlicesSince, when set, says how EndpointSlices differs from an
	// earlier State's: a translator that read that map need only look at
	// the Services listed. A source may leave it nil.
	SlicesSince *SliceChanges
	// Secrets holds the Secrets of type kubernetes.io/tls, and the Secrets
	// of any type that an owned Ingress refers to otherwise (see
	// Reference): other Secrets are never in it, so a Secret named by
	// spec.tls must be checked to be of type kubernetes.io/tls.
	Secrets map[types.NamespacedName]*corev1.Secret
	// ConfigMaps holds the ConfigMaps an owned Ingress refers to, and no
	// others.
	ConfigMaps map[types.NamespacedName]*corev1.ConfigMap
	// Gateway holds the Gateway API objects for translate/gatewayapi;
	// nil when there are none (or the API server does not serve them).
	// Like the other parts, it is the
	// very same value while none of its objects changed.
	Gateway *GatewayObjects
}

// SliceChanges is EndpointSlices' difference from Base: the entries of
// Services (in no order) were replaced, added or removed, and no other.
// At 10,000 Ingresses it spares a translator checking 100,000 Services'
// endpoints for the one an EndpointSlice change touched.
type SliceChanges struct {
	Base     map[types.NamespacedName][]*EndpointSlice
	Services []types.NamespacedName
}

// NewState returns an empty State with its maps allocated.
func NewState() *State {
	return &State{
		Services:       map[types.NamespacedName]*Service{},
		EndpointSlices: map[types.NamespacedName][]*EndpointSlice{},
		Secrets:        map[types.NamespacedName]*corev1.Secret{},
		ConfigMaps:     map[types.NamespacedName]*corev1.ConfigMap{},
	}
}

// loggerOr is l, or slog's default logger when l is nil: every component's
// Logger field may be left unset.
func loggerOr(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

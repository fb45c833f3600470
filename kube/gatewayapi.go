package kube

import (
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwapiv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// GatewayObjects are the Gateway API objects a State holds for the Gateway
// API front-end (translate/gatewayapi). The front-end decides which
// GatewayClasses are ours and which Routes attach where, since both are
// Gateway API rules; kube only keeps the objects, each list sorted by
// namespace and name so that output never depends on input order.
//
// Only the v1 types are kept: the v1beta1 kinds a manifest may still use
// are the same Go types (gwapiv1beta1.HTTPRoute is gwapiv1.HTTPRoute), and
// are kept as their v1 selves.
type GatewayObjects struct {
	GatewayClasses  []*gwapiv1.GatewayClass
	Gateways        []*gwapiv1.Gateway
	HTTPRoutes      []*gwapiv1.HTTPRoute
	GRPCRoutes      []*gwapiv1.GRPCRoute
	TLSRoutes       []*gwapiv1.TLSRoute
	ReferenceGrants []*gwapiv1.ReferenceGrant
	// BackendTLSPolicies say how Gateways reach Services over TLS.
	BackendTLSPolicies []*gwapiv1.BackendTLSPolicy
	// NamespaceLabels are the labels of each namespace, by name: a
	// listener's allowedRoutes may select the namespaces whose Routes it
	// takes by label. Namespaces alone are no Gateway API object (Empty).
	NamespaceLabels map[string]map[string]string
}

// Empty says whether there is no Gateway API object at all.
func (g *GatewayObjects) Empty() bool {
	return g == nil || len(g.GatewayClasses)+len(g.Gateways)+len(g.HTTPRoutes)+len(g.GRPCRoutes)+len(g.TLSRoutes)+len(g.ReferenceGrants)+len(g.BackendTLSPolicies) == 0
}

// manifestScheme knows client-go's built-in types and Gateway API's v1 and
// v1beta1 kinds: what a user would kubectl apply. It is made per decoder
// rather than kept in a package variable.
func manifestScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, gwapiv1.Install, gwapiv1beta1.Install} {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("building the manifest scheme: %w", err)
		}
	}
	return s, nil
}

// manifestDecoder decodes manifests (no defaulting, no conversion). Every
// scheme builder above only registers types, so the error cannot happen
// short of a broken dependency; it falls back to client-go's types.
func manifestDecoder() runtime.Decoder {
	s, err := manifestScheme()
	if err != nil {
		s = clientgoscheme.Scheme
	}
	return serializer.NewCodecFactory(s).UniversalDeserializer()
}

// addGatewayObject files a Gateway API object under its kind, defaulting
// the namespace as kubectl would; it reports whether obj is one.
func (o *Objects) addGatewayObject(obj runtime.Object) bool {
	g := &o.Gateway
	switch v := obj.(type) {
	case *gwapiv1.GatewayClass:
		g.GatewayClasses = append(g.GatewayClasses, v)
	case *gwapiv1beta1.GatewayClass:
		g.GatewayClasses = append(g.GatewayClasses, (*gwapiv1.GatewayClass)(v))
	case *gwapiv1.Gateway:
		defaultNamespace(&v.Namespace)
		g.Gateways = append(g.Gateways, v)
	case *gwapiv1beta1.Gateway:
		defaultNamespace(&v.Namespace)
		g.Gateways = append(g.Gateways, (*gwapiv1.Gateway)(v))
	case *gwapiv1.HTTPRoute:
		defaultNamespace(&v.Namespace)
		g.HTTPRoutes = append(g.HTTPRoutes, v)
	case *gwapiv1beta1.HTTPRoute:
		defaultNamespace(&v.Namespace)
		g.HTTPRoutes = append(g.HTTPRoutes, (*gwapiv1.HTTPRoute)(v))
	case *gwapiv1.GRPCRoute:
		defaultNamespace(&v.Namespace)
		g.GRPCRoutes = append(g.GRPCRoutes, v)
	case *gwapiv1.TLSRoute:
		defaultNamespace(&v.Namespace)
		g.TLSRoutes = append(g.TLSRoutes, v)
	case *gwapiv1.ReferenceGrant:
		defaultNamespace(&v.Namespace)
		g.ReferenceGrants = append(g.ReferenceGrants, v)
	case *gwapiv1beta1.ReferenceGrant:
		defaultNamespace(&v.Namespace)
		g.ReferenceGrants = append(g.ReferenceGrants, (*gwapiv1.ReferenceGrant)(v))
	case *gwapiv1.BackendTLSPolicy:
		defaultNamespace(&v.Namespace)
		g.BackendTLSPolicies = append(g.BackendTLSPolicies, v)
	case *corev1.Namespace:
		if g.NamespaceLabels == nil {
			g.NamespaceLabels = map[string]map[string]string{}
		}
		g.NamespaceLabels[v.Name] = namespaceLabels(v)
	default:
		return false
	}
	return true
}

// gatewayState is the State's part of Gateway API objects: the last of
// each namespace and name, sorted.
func gatewayState(g GatewayObjects) *GatewayObjects {
	if g.Empty() {
		return nil
	}
	return &GatewayObjects{
		GatewayClasses:     sortedByName(lastByName(g.GatewayClasses)),
		Gateways:           sortedByName(lastByName(g.Gateways)),
		HTTPRoutes:         sortedByName(lastByName(g.HTTPRoutes)),
		GRPCRoutes:         sortedByName(lastByName(g.GRPCRoutes)),
		TLSRoutes:          sortedByName(lastByName(g.TLSRoutes)),
		ReferenceGrants:    sortedByName(lastByName(g.ReferenceGrants)),
		BackendTLSPolicies: sortedByName(lastByName(g.BackendTLSPolicies)),
		NamespaceLabels:    g.NamespaceLabels,
	}
}

// namespaceLabels are a namespace's labels, with the one the API server
// gives every namespace (kubernetes.io/metadata.name, since Kubernetes
// 1.22) where a manifest leaves it out: selectors are written against it.
func namespaceLabels(ns *corev1.Namespace) map[string]string {
	out := make(map[string]string, len(ns.Labels)+1)
	maps.Copy(out, ns.Labels)
	if _, ok := out[corev1.LabelMetadataName]; !ok {
		out[corev1.LabelMetadataName] = ns.Name
	}
	return out
}

// sortedByName is a copy of objs sorted by namespace, then name.
func sortedByName[T interface {
	GetNamespace() string
	GetName() string
}](objs []T) []T {
	out := append([]T(nil), objs...)
	sort.Slice(out, func(i, j int) bool {
		if a, b := out[i].GetNamespace(), out[j].GetNamespace(); a != b {
			return a < b
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out
}

package kube

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gwinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions"
)

// GatewayInformers are the informers of the Gateway API kinds the
// front-end reads (translate/gatewayapi). Each is nil when the API server
// does not serve its kind (the CRDs are not installed): the Ingresses are
// served all the same.
type GatewayInformers struct {
	GatewayClasses     cache.SharedIndexInformer
	Gateways           cache.SharedIndexInformer
	HTTPRoutes         cache.SharedIndexInformer
	GRPCRoutes         cache.SharedIndexInformer
	TLSRoutes          cache.SharedIndexInformer
	ReferenceGrants    cache.SharedIndexInformer
	BackendTLSPolicies cache.SharedIndexInformer
	// Namespaces, for their labels (allowedRoutes selectors); watched
	// whenever some Gateway API kind is.
	Namespaces cache.SharedIndexInformer
}

// all lists the informers with their kinds, nil ones included.
func (g GatewayInformers) all() []kindInformer {
	return []kindInformer{
		{"GatewayClass", g.GatewayClasses},
		{"Gateway", g.Gateways},
		{"HTTPRoute", g.HTTPRoutes},
		{"GRPCRoute", g.GRPCRoutes},
		{"TLSRoute", g.TLSRoutes},
		{"ReferenceGrant", g.ReferenceGrants},
		{"BackendTLSPolicy", g.BackendTLSPolicies},
		{"Namespace", g.Namespaces},
	}
}

type kindInformer struct {
	kind     string
	informer cache.SharedIndexInformer
}

// gatewayResources are the v1 resources watched, by kind (a function, not
// a package variable, so that nobody can change it).
func gatewayResources() map[string]string {
	return map[string]string{
		"GatewayClass":     "gatewayclasses",
		"Gateway":          "gateways",
		"HTTPRoute":        "httproutes",
		"GRPCRoute":        "grpcroutes",
		"TLSRoute":         "tlsroutes",
		"ReferenceGrant":   "referencegrants",
		"BackendTLSPolicy": "backendtlspolicies",
	}
}

// ServedGatewayKinds asks the API server which of the Gateway API kinds
// the front-end reads it serves at gateway.networking.k8s.io/v1. None,
// without an error, when the group version is not served at all: a
// cluster without the CRDs is a cluster of Ingresses only, not a fault.
// Informers on a kind that is not served would fail to list forever and
// keep the caches from ever syncing, hence the question.
func ServedGatewayKinds(ctx context.Context, d discovery.DiscoveryInterface) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	list, err := d.ServerResourcesForGroupVersion(gwapiv1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering %s: %w", gwapiv1.GroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	var kinds []string
	for kind, resource := range gatewayResources() {
		if served[resource] {
			kinds = append(kinds, kind)
		}
	}
	slices.Sort(kinds)
	return kinds, nil
}

// GatewayInformerFactory makes the GatewayInformers of the kinds served.
type GatewayInformerFactory struct {
	factory gwinformers.SharedInformerFactory
	core    informers.SharedInformerFactory // the Namespaces' labels
	kinds   []string
}

// NewGatewayInformerFactory returns a factory reading through client,
// which makes informers only for kinds (as ServedGatewayKinds says).
// Objects are trimmed as the Ingresses are (managed fields, the
// last-applied annotation); Namespaces, read through core, to their name
// and labels.
func NewGatewayInformerFactory(client gwclient.Interface, core kubernetes.Interface, kinds []string) *GatewayInformerFactory {
	return &GatewayInformerFactory{
		factory: gwinformers.NewSharedInformerFactoryWithOptions(client, 0, gwinformers.WithTransform(dropUnusedFields)),
		core:    informers.NewSharedInformerFactoryWithOptions(core, 0, informers.WithTransform(namespaceNameAndLabels)),
		kinds:   kinds,
	}
}

// namespaceNameAndLabels trims a Namespace to what the front-end reads.
func namespaceNameAndLabels(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels, ResourceVersion: ns.ResourceVersion, UID: ns.UID}}, nil
}

// Informers returns the informers of the kinds served. Call it before
// Start: a factory starts only the informers asked of it.
func (f *GatewayInformerFactory) Informers() GatewayInformers {
	var g GatewayInformers
	if f == nil {
		return g
	}
	v1 := f.factory.Gateway().V1()
	for _, kind := range f.kinds {
		switch kind {
		case "GatewayClass":
			g.GatewayClasses = v1.GatewayClasses().Informer()
		case "Gateway":
			g.Gateways = v1.Gateways().Informer()
		case "HTTPRoute":
			g.HTTPRoutes = v1.HTTPRoutes().Informer()
		case "GRPCRoute":
			g.GRPCRoutes = v1.GRPCRoutes().Informer()
		case "TLSRoute":
			g.TLSRoutes = v1.TLSRoutes().Informer()
		case "ReferenceGrant":
			g.ReferenceGrants = v1.ReferenceGrants().Informer()
		case "BackendTLSPolicy":
			g.BackendTLSPolicies = v1.BackendTLSPolicies().Informer()
		}
	}
	if len(f.kinds) > 0 {
		g.Namespaces = f.core.Core().V1().Namespaces().Informer()
	}
	return g
}

// Start starts the informers asked for so far; they run until stop closes.
func (f *GatewayInformerFactory) Start(stop <-chan struct{}) {
	if f != nil {
		f.factory.Start(stop)
		f.core.Start(stop)
	}
}

// Shutdown waits for the informers to end once stop has closed.
func (f *GatewayInformerFactory) Shutdown() {
	if f != nil {
		f.factory.Shutdown()
		f.core.Shutdown()
	}
}

// LogGatewayKinds says once, at start-up, which Gateway API kinds cluster
// mode watches: an operator who installed the CRDs after the controller
// learns from it that a restart is needed.
func LogGatewayKinds(l *slog.Logger, kinds []string) {
	l = loggerOr(l)
	if len(kinds) == 0 {
		l.Info("Gateway API is not served by the API server (CRDs not installed): watching Ingresses only until they are installed", "groupVersion", gwapiv1.GroupVersion.String())
		return
	}
	missing := []string{}
	for kind := range gatewayResources() {
		if !slices.Contains(kinds, kind) {
			missing = append(missing, kind)
		}
	}
	slices.Sort(missing)
	l.Info("watching Gateway API objects", "kinds", kinds, "notServed", missing)
}

// gatewayObjects lists what the informers hold.
func (g GatewayInformers) objects() GatewayObjects {
	return GatewayObjects{
		GatewayClasses:     keptIn[*gwapiv1.GatewayClass](g.GatewayClasses),
		Gateways:           keptIn[*gwapiv1.Gateway](g.Gateways),
		HTTPRoutes:         keptIn[*gwapiv1.HTTPRoute](g.HTTPRoutes),
		GRPCRoutes:         keptIn[*gwapiv1.GRPCRoute](g.GRPCRoutes),
		TLSRoutes:          keptIn[*gwapiv1.TLSRoute](g.TLSRoutes),
		ReferenceGrants:    keptIn[*gwapiv1.ReferenceGrant](g.ReferenceGrants),
		BackendTLSPolicies: keptIn[*gwapiv1.BackendTLSPolicy](g.BackendTLSPolicies),
		NamespaceLabels:    labelsOf(keptIn[*corev1.Namespace](g.Namespaces)),
	}
}

// labelsOf are the namespaces' labels by name; nil for none.
func labelsOf(list []*corev1.Namespace) map[string]map[string]string {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]map[string]string, len(list))
	for _, ns := range list {
		out[ns.Name] = namespaceLabels(ns)
	}
	return out
}

// keptIn is kept of an informer that may be nil (a kind not served).
func keptIn[T any](inf cache.SharedIndexInformer) []T {
	if inf == nil {
		return nil
	}
	return kept[T](inf.GetStore())
}

// gatewayGenerationEqual says an update changed nothing the front-end
// reads: Gateway API objects move metadata.generation on every spec
// change, and the front-end reads spec, name, namespace and creation
// time only; a status write (ours, once the writer comes, or another
// controller's on a Gateway of its class) must not cost a rebuild.
func gatewayGenerationEqual(old, obj any) bool {
	if a, ok := old.(*corev1.Namespace); ok {
		// A Namespace has no generation; only its labels are read.
		b, ok := obj.(*corev1.Namespace)
		return ok && maps.Equal(a.Labels, b.Labels)
	}
	type generational interface{ GetGeneration() int64 }
	a, ok1 := old.(generational)
	b, ok2 := obj.(generational)
	return ok1 && ok2 && a.GetGeneration() != 0 && a.GetGeneration() == b.GetGeneration()
}

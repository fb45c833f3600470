package kube

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	networkinginformers "k8s.io/client-go/informers/networking/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Informers are the shared informers a ClusterSource reads. The caller
// makes them (NewInformerFactories makes the ones serve uses), starts them
// and shuts them down; tests may hand in their own.
type Informers struct {
	Ingresses      networkinginformers.IngressInformer
	IngressClasses networkinginformers.IngressClassInformer
	// Services holds *Service and EndpointSlices *EndpointSlice (see
	// NewService and NewEndpointSlice), not the API objects.
	Services       cache.SharedIndexInformer
	EndpointSlices cache.SharedIndexInformer
	// TLSSecrets holds only Secrets of type kubernetes.io/tls, stripped to
	// their key pair.
	TLSSecrets coreinformers.SecretInformer
	// Referenced lists and watches one referenced Secret or ConfigMap
	// (see referenceWatches): the source starts and stops those watches
	// itself, as Ingresses come to refer to objects and stop doing so.
	// Nil: references are not followed.
	Referenced func(Reference) cache.ListerWatcher
	// Gateway are the Gateway API kinds' informers (gatewayinformers.go),
	// each nil when not watched: the caller makes and starts them.
	Gateway GatewayInformers
}

// InformerFactories make the Informers, each with the selector and
// transform that keep what the control plane holds small: at 10,000
// Ingresses the caches are most of its memory.
type InformerFactories struct {
	client     kubernetes.Interface
	all        informers.SharedInformerFactory
	tlsSecrets informers.SharedInformerFactory
}

// NewInformerFactories returns factories reading through client, with
// the default InformerOptions.
func NewInformerFactories(client kubernetes.Interface) *InformerFactories {
	return NewInformerFactoriesWith(client, InformerOptions{})
}

// NewInformerFactoriesWith returns factories reading through client, as o
// says.
func NewInformerFactoriesWith(client kubernetes.Interface, o InformerOptions) *InformerFactories {
	if o.List {
		client = listingClient{client}
	}
	return &InformerFactories{
		client: client,
		all: informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithTransform(dropUnusedFields)),
		// Only TLS Secrets, filtered by the API server: the others may be
		// many and large, and we never read them.
		tlsSecrets: informers.NewSharedInformerFactoryWithOptions(client, 0,
			informers.WithTransform(keepOnlyKeyPair),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
			})),
	}
}

// Informers returns the informers of a ClusterSource. Call it before Start:
// a factory starts only the informers asked of it.
func (f *InformerFactories) Informers() Informers {
	// EndpointSlices and Services are many (100,000 of each at 10,000
	// Ingresses) and always listed whole: their informers keep no
	// namespace index.
	slices := f.all.InformerFor(&discoveryv1.EndpointSlice{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return discoveryinformers.NewEndpointSliceInformer(c, metav1.NamespaceAll, resync, cache.Indexers{})
	})
	services := f.all.InformerFor(&corev1.Service{}, func(c kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return coreinformers.NewServiceInformer(c, metav1.NamespaceAll, resync, cache.Indexers{})
	})
	inf := Informers{
		Ingresses:      f.all.Networking().V1().Ingresses(),
		IngressClasses: f.all.Networking().V1().IngressClasses(),
		Services:       services,
		EndpointSlices: slices,
		TLSSecrets:     f.tlsSecrets.Core().V1().Secrets(),
		Referenced:     f.referenced,
	}
	// Asking for the informer is what registers it with its factory.
	inf.Ingresses.Informer()
	inf.IngressClasses.Informer()
	inf.TLSSecrets.Informer()
	return inf
}

// referenced selects the one object by name, in its namespace.
func (f *InformerFactories) referenced(r Reference) cache.ListerWatcher {
	resource := "secrets"
	if r.Kind == KindConfigMap {
		resource = "configmaps"
	}
	return cache.NewFilteredListWatchFromClient(f.client.CoreV1().RESTClient(), resource, r.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", r.Name).String()
	})
}

// Start starts the informers asked for so far; they run until stop closes.
func (f *InformerFactories) Start(stop <-chan struct{}) {
	f.all.Start(stop)
	f.tlsSecrets.Start(stop)
}

// Shutdown waits for the informers to end once stop has closed.
func (f *InformerFactories) Shutdown() {
	f.all.Shutdown()
	f.tlsSecrets.Shutdown()
}

// dropUnusedFields trims what the informer keeps in memory to what the
// translator reads. At 10,000 Ingresses a cluster holds some 100,000 Services
// and EndpointSlices with a million endpoints, where managed fields, the
// last-applied annotation, topology hints and target references would
// outweigh everything used. Services and EndpointSlices are kept as
// Service and EndpointSlice, not as API objects.
func dropUnusedFields(obj any) (any, error) {
	switch o := obj.(type) {
	case *discoveryv1.EndpointSlice:
		return NewEndpointSlice(o), nil
	case *corev1.Service:
		return NewService(o), nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if ann := m.GetAnnotations(); ann != nil {
			if _, ok := ann[corev1.LastAppliedConfigAnnotation]; ok {
				trimmed := make(map[string]string, len(ann))
				for k, v := range ann {
					if k != corev1.LastAppliedConfigAnnotation {
						trimmed[k] = v
					}
				}
				m.SetAnnotations(trimmed)
			}
		}
	}
	return obj, nil
}

// keepOnlyKeyPair strips a TLS Secret down to its certificate and key before
// it is cached: the rest (annotations, labels, ca.crt, other keys) is never
// read, and a cluster may hold many large Secrets.
func keepOnlyKeyPair(obj any) (any, error) {
	secret, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	return &corev1.Secret{
		TypeMeta: secret.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            secret.Name,
			Namespace:       secret.Namespace,
			UID:             secret.UID,
			ResourceVersion: secret.ResourceVersion,
		},
		Type: secret.Type,
		Data: map[string][]byte{
			corev1.TLSCertKey:       secret.Data[corev1.TLSCertKey],
			corev1.TLSPrivateKeyKey: secret.Data[corev1.TLSPrivateKeyKey],
		},
	}, nil
}

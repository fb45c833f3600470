package kube

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// ClusterSource serves State from a live API server through shared informers
// on Ingress, IngressClass, Service, EndpointSlice and TLS Secrets.
type ClusterSource struct {
	Client kubernetes.Interface
	Filter ClassFilter
	Logger *slog.Logger

	synced  atomic.Bool
	changes changeLog

	ingresses      networkinglisters.IngressLister
	ingressClasses networkinglisters.IngressClassLister
	services       corelisters.ServiceLister
	endpointSlices discoverylisters.EndpointSliceLister
	secrets        corelisters.SecretLister
	sliceIndex     cache.Indexer
}

const byServiceIndex = "byService"

func indexByService(obj any) ([]string, error) {
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	if svc, named := ServiceNameOf(slice); named {
		return []string{svc.String()}, nil
	}
	return nil, nil
}

// TakeChanges implements Source.
func (s *ClusterSource) TakeChanges() Changes { return s.changes.take() }

// EndpointSlices implements Source.
func (s *ClusterSource) EndpointSlices(svc types.NamespacedName) []*discoveryv1.EndpointSlice {
	objs, err := s.sliceIndex.ByIndex(byServiceIndex, svc.String())
	if err != nil {
		return nil
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*discoveryv1.EndpointSlice))
	}
	sortSlices(out)
	return out
}

var _ Source = (*ClusterSource)(nil)

// Run implements Source. It returns once ctx is done, or with an error when
// the caches cannot sync.
func (s *ClusterSource) Run(ctx context.Context, changed func()) error {
	factory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithTransform(dropUnusedFields))
	// Only TLS Secrets, filtered by the API server: the others may be many and
	// large, and we never read them.
	secretFactory := informers.NewSharedInformerFactoryWithOptions(s.Client, 0,
		informers.WithTransform(keepOnlyKeyPair),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String()
		}))

	anything := func(any) { s.changes.everything(); s.notify(changed) }
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    anything,
		UpdateFunc: func(_, obj any) { anything(obj) },
		DeleteFunc: anything,
	}
	// EndpointSlice changes are recorded by Service, for the endpoint fast
	// path: they never change listeners, routes or clusters.
	sliceChanged := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		slice, ok := obj.(*discoveryv1.EndpointSlice)
		if svc, named := ServiceNameOf(slice); ok && named {
			s.changes.endpointsOf(svc)
		} else {
			s.changes.everything()
		}
		s.notify(changed)
	}
	sliceHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    sliceChanged,
		UpdateFunc: func(old, obj any) { sliceChanged(old); sliceChanged(obj) },
		DeleteFunc: sliceChanged,
	}
	sliceInformer := factory.Discovery().V1().EndpointSlices().Informer()
	if err := sliceInformer.AddIndexers(cache.Indexers{byServiceIndex: indexByService}); err != nil {
		return fmt.Errorf("indexing endpoint slices: %w", err)
	}
	s.sliceIndex = sliceInformer.GetIndexer()
	informersToSync := []cache.SharedIndexInformer{
		factory.Networking().V1().Ingresses().Informer(),
		factory.Networking().V1().IngressClasses().Informer(),
		factory.Core().V1().Services().Informer(),
		sliceInformer,
		secretFactory.Core().V1().Secrets().Informer(),
	}
	for _, inf := range informersToSync {
		h := handler
		if inf == sliceInformer {
			h = sliceHandler
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("adding event handler: %w", err)
		}
	}
	s.ingresses = factory.Networking().V1().Ingresses().Lister()
	s.ingressClasses = factory.Networking().V1().IngressClasses().Lister()
	s.services = factory.Core().V1().Services().Lister()
	s.endpointSlices = factory.Discovery().V1().EndpointSlices().Lister()
	s.secrets = secretFactory.Core().V1().Secrets().Lister()

	factory.Start(ctx.Done())
	secretFactory.Start(ctx.Done())
	defer factory.Shutdown()
	defer secretFactory.Shutdown()

	start := time.Now()
	syncs := make([]cache.InformerSynced, len(informersToSync))
	for i, inf := range informersToSync {
		syncs[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("informer caches did not sync")
	}
	s.logger().Info("informer caches synced", "took", time.Since(start).Round(time.Millisecond))
	s.synced.Store(true)
	changed()
	<-ctx.Done()
	return nil
}

// notify passes changes on only once the caches are whole: a State built
// from half-filled caches would withdraw routes that still exist.
func (s *ClusterSource) notify(changed func()) {
	if s.synced.Load() {
		changed()
	}
}

// State implements Source.
func (s *ClusterSource) State() *State {
	var objs Objects
	everything := labels.Everything()
	objs.Ingresses, _ = s.ingresses.List(everything)
	objs.IngressClasses, _ = s.ingressClasses.List(everything)
	objs.Services, _ = s.services.List(everything)
	objs.EndpointSlices, _ = s.endpointSlices.List(everything)
	objs.Secrets, _ = s.secrets.List(everything)
	return objs.State(s.Filter)
}

func (s *ClusterSource) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.Default()
	}
	return s.Logger
}

// dropUnusedFields trims what the informer keeps in memory: managed fields
// and the last-applied annotation can be larger than the object itself.
func dropUnusedFields(obj any) (any, error) {
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

package kube

import (
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// BenchmarkClusterSourceState is the State a change gives at n Ingresses
// (ten Services each, the load command's shape): one Ingress edited, or
// one Service added, looked up by name ("spliced"), or the part listed
// again as when the change is not known by name ("listed": an
// IngressClass changed, or the build before this one).
func BenchmarkClusterSourceState(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, kind := range []string{"ingress", "service"} {
			for _, listed := range []bool{false, true} {
				b.Run(fmt.Sprintf("%d/%s/listed-%t", n, kind, listed), func(b *testing.B) {
					s, ingresses, services := benchClusterSource(b, n)
					s.State()
					b.ResetTimer()
					for i := range b.N {
						// One object changed in the informer's store, and
						// recorded as its handler does.
						var obj any
						keys, part := &s.ingressKeys, partIngresses
						switch kind {
						case "ingress":
							ing := s.cached.Ingresses[i%n].DeepCopy()
							ing.ResourceVersion = strconv.Itoa(i)
							if err := ingresses.Update(ing); err != nil {
								b.Fatal(err)
							}
							obj = ing
						case "service":
							svc := &Service{Namespace: "bench", Name: fmt.Sprintf("new-%d", i)}
							if err := services.Add(svc); err != nil {
								b.Fatal(err)
							}
							obj, keys, part = svc, &s.serviceKeys, partServices
						}
						keys.changed(obj)
						if listed {
							keys.everything()
						}
						s.dirty.Or(part)
						st := s.State()
						if len(st.Ingresses) != n {
							b.Fatalf("%d Ingresses", len(st.Ingresses))
						}
					}
				})
			}
		}
	}
}

// benchClusterSource is a ClusterSource over informer stores holding n
// Ingresses of ten paths each and their 10n Services, as if synced.
func benchClusterSource(b *testing.B, n int) (*ClusterSource, cache.Indexer, cache.Indexer) {
	b.Helper()
	ingresses := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	services := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for i := range n {
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("ing-%d", i), ResourceVersion: "1"}}
		rule := networkingv1.IngressRule{Host: fmt.Sprintf("host-%d.example.com", i)}
		rule.HTTP = &networkingv1.HTTPIngressRuleValue{}
		for p := range 10 {
			name := fmt.Sprintf("svc-%d-%d", i, p)
			rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{Path: fmt.Sprintf("/p%d", p), Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}},
			}})
			if err := services.Add(&Service{Namespace: "bench", Name: name, Ports: []ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}); err != nil {
				b.Fatal(err)
			}
		}
		ing.Spec.Rules = []networkingv1.IngressRule{rule}
		if err := ingresses.Add(ing); err != nil {
			b.Fatal(err)
		}
	}
	empty := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	s := &ClusterSource{
		Filter:         ClassFilter{WatchClassless: true},
		ingresses:      networkinglisters.NewIngressLister(ingresses),
		ingressClasses: networkinglisters.NewIngressClassLister(empty()),
		services:       services,
		secrets:        corelisters.NewSecretLister(empty()),
		referenced:     newReferenceWatches(b.Context(), nil, nil, slog.New(slog.DiscardHandler)),
	}
	return s, ingresses, services
}

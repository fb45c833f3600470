package xds_test

import (
	"fmt"
	"maps"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// BenchmarkPublishBackendSwitch is the load command's backend change short
// of the network: one path of an existing Ingress switched to a Service no
// route used (a cluster and its load assignment added, the previous one's
// removed), translated and published, with and without on-demand
// clusters, at n Ingresses. It is the change whose cost grows with the
// number of clusters: the cluster and load-assignment lists change names.
// With endpoints-moved, an EndpointSlice changed before each switch (as
// the load command's endpoint kind, or any cluster's churn, does), so that
// the build's EndpointSlices are not the previous build's.
func BenchmarkPublishBackendSwitch(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, c := range []struct{ onDemand, endpointsMoved bool }{{false, false}, {true, false}, {true, true}} {
			onDemand := c.onDemand
			b.Run(fmt.Sprintf("%d/on-demand-%t/endpoints-moved-%t", n, onDemand, c.endpointsMoved), func(b *testing.B) {
				w := load.Workload{N: n, Namespace: "bench"}
				st := w.State()
				// Two Services no Ingress routes to, as the load command's
				// backend kind creates before its changes.
				spare := []int{w.Services(), w.Services() + 1}
				for _, s := range spare {
					svc := kube.NewService(w.Service(s))
					key := types.NamespacedName{Namespace: w.Namespace, Name: load.ServiceName(s)}
					st.Services[key] = svc
					st.EndpointSlices[key] = []*kube.EndpointSlice{kube.NewEndpointSlice(w.EndpointSlice(s, load.EndpointsPerSlice))}
				}
				p := newPublisher(translate.Options{HTTPPort: 8080, OnDemandClusters: onDemand})
				p.publish(b, st)
				switched := func(s int) *networkingv1.Ingress {
					ing := st.Ingresses[0].DeepCopy()
					ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = load.ServiceName(s)
					return ing
				}
				ings := []*networkingv1.Ingress{switched(spare[0]), switched(spare[1])}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if c.endpointsMoved {
						// A new map, as a source makes when a slice changed.
						// and says which Service's slices it took again.
						b.StopTimer()
						base := st.EndpointSlices
						st.EndpointSlices = maps.Clone(base)
						s := 1 + i%(w.Services()-1)
						key := types.NamespacedName{Namespace: w.Namespace, Name: load.ServiceName(s)}
						st.EndpointSlices[key] = []*kube.EndpointSlice{kube.NewEndpointSlice(w.EndpointSlice(s, load.EndpointsPerSlice-1+i%2))}
						st.SlicesSince = &kube.SliceChanges{Base: base, Services: []types.NamespacedName{key}}
						b.StartTimer()
					}
					// A new list: the translator compares the previous one by identity.
					st.Ingresses = append([]*networkingv1.Ingress{ings[i%2]}, st.Ingresses[1:]...)
					p.publish(b, st)
				}
			})
		}
	}
}

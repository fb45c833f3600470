package xds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// BenchmarkPublishEndpointChange is the whole endpoint fast path short of
// the network: one EndpointSlice changed, translated through the fast path
// and published, with the workload of n Ingresses.
func BenchmarkPublishEndpointChange(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w := load.Workload{N: n, Namespace: "bench"}
			var objs kube.Objects
			for i := 0; i < n; i++ {
				objs.Ingresses = append(objs.Ingresses, w.Ingress(i))
			}
			for s := 0; s < w.Services(); s++ {
				objs.Services = append(objs.Services, w.Service(s))
				objs.EndpointSlices = append(objs.EndpointSlices, w.EndpointSlice(s, load.EndpointsPerSlice))
			}
			st := objs.State(kube.ClassFilter{WatchClassless: true})
			tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
			server := xds.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
			ctx := context.Background()
			res, err := tr.Translate(st)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := server.Publish(ctx, res.Resources); err != nil {
				b.Fatal(err)
			}
			key := types.NamespacedName{Namespace: "bench", Name: load.ServiceName(0)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				slice := w.EndpointSlice(0, load.EndpointsPerSlice-1+i%2)
				st.EndpointSlices[key] = []*discoveryv1.EndpointSlice{slice}
				res, ok := tr.UpdateEndpoints(map[types.NamespacedName][]*discoveryv1.EndpointSlice{key: st.EndpointSlices[key]})
				if !ok {
					b.Fatal("no fast path")
				}
				if _, err := server.Publish(ctx, res.Resources); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package xds_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// BenchmarkPublishIngressChangeScoped is BenchmarkPublishIngressChange
// with the plain-HTTP routes in route scopes (serve --route-scopes): what
// splitting the route configuration costs or saves the control plane per
// change. It reports the bytes of the route configurations the change
// updated, which is what a change sends each Envoy: one scope's.
func BenchmarkPublishIngressChangeScoped(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, scopes := range []int{0, 256, 1024} {
			b.Run(fmt.Sprintf("%d/scopes-%d", n, scopes), func(b *testing.B) {
				w := load.Workload{N: n, Namespace: "bench"}
				st := w.State()
				p := newPublisher(translate.Options{HTTPPort: 8080, RouteScopes: scopes})
				publish := func() *xds.Snapshot {
					_, snap := p.publish(b, st)
					return snap
				}
				base := st.Ingresses
				prev := publish()
				extra := w.ChangeIngress("bench", 0, 0)
				var sent int
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i%2 == 0 {
						st.Ingresses = append(slices.Clip(base), extra)
					} else {
						st.Ingresses = base
					}
					snap := publish()
					b.StopTimer()
					sent += changedBytes(prev, snap, resource.RouteType)
					prev = snap
					b.StartTimer()
				}
				b.ReportMetric(float64(sent)/float64(b.N), "route-bytes/op")
			})
		}
	}
}

// changedBytes is the encoded size of the resources of typeURL whose
// version differs between two snapshots.
func changedBytes(prev, next *xds.Snapshot, typeURL string) int {
	before := prev.GetVersionMap(typeURL)
	resources := next.GetResources(typeURL)
	n := 0
	for name, version := range next.GetVersionMap(typeURL) {
		if before[name] != version {
			n += proto.Size(resources[name])
		}
	}
	return n
}

package xds_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// publisher is the pipeline short of the source and the network: a
// translator and a server, each state translated and published.
type publisher struct {
	tr     *translate.Translator
	server *xds.Server
}

func newPublisher(opts translate.Options) publisher {
	return publisher{tr: translate.NewTranslator(opts), server: xds.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))}
}

// publish translates st and publishes the result.
func (p publisher) publish(tb testing.TB, st *kube.State) (*translate.Result, *xds.Snapshot) {
	tb.Helper()
	res, err := p.tr.Translate(st)
	if err != nil {
		tb.Fatal(err)
	}
	snap, err := p.server.Publish(context.Background(), res.Resources)
	if err != nil {
		tb.Fatal(err)
	}
	return res, snap
}

// published is the workload of n Ingresses translated and
// published once: a warm control plane, short of the network.
type published struct {
	publisher
	w  load.Workload
	st *kube.State
}

func publishWorkload(b *testing.B, n int) *published {
	b.Helper()
	w := load.Workload{N: n, Namespace: "bench"}
	p := &published{publisher: newPublisher(translate.Options{HTTPPort: 8080}), w: w, st: w.State()}
	p.publish(b, p.st)
	return p
}

// BenchmarkPublishEndpointChange is the whole endpoint fast path short of
// the network: one EndpointSlice changed, translated through the fast path
// and published, with the workload of n Ingresses.
func BenchmarkPublishEndpointChange(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p := publishWorkload(b, n)
			key := types.NamespacedName{Namespace: "bench", Name: load.ServiceName(0)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				slice := kube.NewEndpointSlice(p.w.EndpointSlice(0, load.EndpointsPerSlice-1+i%2))
				changed := map[types.NamespacedName][]*kube.EndpointSlice{key: {slice}}
				res, ok := p.tr.UpdateEndpoints(changed)
				if !ok {
					b.Fatal("no fast path")
				}
				if _, err := p.server.Publish(context.Background(), res.Resources); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPublishIngressChange is a full rebuild short of the network and
// of the source: one more Ingress (two new hosts, existing Services, as in
// the load test's Ingress change) translated and published.
func BenchmarkPublishIngressChange(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p := publishWorkload(b, n)
			base := p.st.Ingresses
			extra := p.w.ChangeIngress("bench", 0, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternately with and without the extra Ingress, so that
				// every iteration changes the routes.
				st := *p.st
				if i%2 == 0 {
					st.Ingresses = append(slices.Clip(base), extra)
				} else {
					st.Ingresses = base
				}
				p.publish(b, &st)
			}
		})
	}
}

package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// publishedLoads is the workload of n Ingresses translated and
// published, with the names of its load assignments.
func publishedLoads(b *testing.B, n int) (load.Workload, *translate.Translator, *Server, []string) {
	b.Helper()
	w := load.Workload{N: n, Namespace: "bench"}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	server := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	res, err := tr.Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := server.Publish(context.Background(), res.Resources); err != nil {
		b.Fatal(err)
	}
	var names []string
	for _, cla := range res.Resources.Endpoints {
		names = append(names, cla.GetClusterName())
	}
	return w, tr, server, names
}

// publishEndpointChange adds or removes (by i's parity) an endpoint of
// the workload's first Service, through the fast path, and publishes it.
func publishEndpointChange(b *testing.B, w load.Workload, tr *translate.Translator, server *Server, i int) {
	b.Helper()
	if _, err := server.Publish(context.Background(), endpointChange(b, w, tr, i)); err != nil {
		b.Fatal(err)
	}
}

// endpointChange is the translator's output after adding or removing (by
// i's parity) an endpoint of the workload's first Service, through the
// fast path.
func endpointChange(b *testing.B, w load.Workload, tr *translate.Translator, i int) *translate.Resources {
	b.Helper()
	key := types.NamespacedName{Namespace: "bench", Name: load.ServiceName(0)}
	slice := kube.NewEndpointSlice(w.EndpointSlice(0, load.EndpointsPerSlice-1+i%2))
	fast, ok := tr.UpdateEndpoints(map[types.NamespacedName][]*kube.EndpointSlice{key: {slice}})
	if !ok {
		b.Fatal("no fast path")
	}
	return fast.Resources
}

// deltaClientOf is a delta client of the load assignments names, holding
// them all.
func deltaClientOf(b *testing.B, server *Server, names []string) *cacheClient {
	b.Helper()
	c := newCacheClient("eds", true, resource.EndpointType, names)
	c.watch(b, server.cache, names, nil)
	c.drain(b, server.cache)
	return c
}

// BenchmarkCacheEndpointChangeToClient is an endpoint change through the
// fast path, the publish and the cache, to a delta client that subscribes to
// every load assignment and acknowledges each response: the control plane's
// part of the endpoint latency, short of the network.
func BenchmarkCacheEndpointChangeToClient(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w, tr, server, names := publishedLoads(b, n)
			c := deltaClientOf(b, server, names)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				publishEndpointChange(b, w, tr, server, i)
				before := c.answers
				c.drain(b, server.cache)
				if c.answers == before {
					b.Fatal("the client was not answered")
				}
			}
		})
	}
}

// BenchmarkCacheEndpointChangeFanout is one endpoint change published to
// many clients at once (the load test's fan-out, short of the network): at
// 1,000 Ingresses, each client subscribes to the 10,000 load assignments
// by name (SotW, as Envoy asks for EDS) or to all of them (delta), and
// every client is answered and acknowledges.
func BenchmarkCacheEndpointChangeFanout(b *testing.B) {
	for _, delta := range []bool{false, true} {
		b.Run(map[bool]string{false: "sotw", true: "delta"}[delta], func(b *testing.B) {
			w, tr, server, names := publishedLoads(b, 1000)
			clients := make([]*cacheClient, 100)
			for i := range clients {
				clients[i] = newCacheClient(fmt.Sprint("eds-", i), delta, resource.EndpointType, names)
				clients[i].watch(b, server.cache, names, nil)
				clients[i].drain(b, server.cache)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				publishEndpointChange(b, w, tr, server, i)
				for _, c := range clients {
					before := c.answers
					c.drain(b, server.cache)
					if c.answers == before {
						b.Fatal("a client was not answered")
					}
				}
			}
		})
	}
}

// BenchmarkCacheSubscribeOne is a delta client holding every load
// assignment by name that stops asking for one and asks for it again, as an
// Envoy does for each cluster that comes and goes (and an on-demand one
// for each cluster it asks for): with the client up to date, only that
// name is looked at.
func BenchmarkCacheSubscribeOne(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			_, _, server, names := publishedLoads(b, n)
			c := deltaClientOf(b, server, names)
			name := names[len(names)/2]
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.watch(b, server.cache, nil, []string{name})
				before := c.answers
				c.watch(b, server.cache, []string{name}, nil)
				c.drain(b, server.cache)
				if c.answers == before {
					b.Fatal("the client was not sent the name it asked for again")
				}
			}
		})
	}
}

// BenchmarkCacheClientConnects is one delta client connecting, at 1,000
// Ingresses, to the cache alone: it subscribes to the 10,000 load
// assignments, is sent them all and acknowledges. B/op is what each Envoy
// of a fan-out costs the cache to connect for this one type, most of it
// the map of what the client holds, which the server keeps for the
// stream. (A SotW client of this harness decodes every resource for its
// name, which would be most of what a SotW run measures.)
func BenchmarkCacheClientConnects(b *testing.B) {
	_, _, server, names := publishedLoads(b, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := newCacheClient(fmt.Sprint("eds-", i), true, resource.EndpointType, names)
		c.watch(b, server.cache, names, nil)
		c.drain(b, server.cache)
		if c.answers == 0 {
			b.Fatal("the client was not answered")
		}
	}
}

// BenchmarkCacheAckManyStreams is one ADS stream's acknowledgement of its
// load assignments while other streams wait, each with a listener and a
// route watch stored, as every Envoy of a fleet does between changes.
// Each endpoint request of a stream asks make-before-break whether the
// stream's routes may go (recheck): what that costs should not grow with
// the number of streams, since it concerns one.
func BenchmarkCacheAckManyStreams(b *testing.B) {
	f := fixture{listenerPort: 10000, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	for _, streams := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) {
			s := f.published(b)
			for i := range streams {
				key := streamKey{delta: true, id: int64(i + 1)}
				for _, c := range []*cacheClient{
					newCacheClient("lds", true, resource.ListenerType, nil),
					newCacheClient("rds", true, resource.RouteType, []string{fixtureRoute}),
				} {
					c.stream = &key
					c.watch(b, s.cache, c.names, nil)
					c.drain(b, s.cache) // answered, then acknowledged: stored
				}
			}
			key := streamKey{delta: true, id: int64(streams + 1)}
			eds := newCacheClient("eds", true, resource.EndpointType, []string{"a", "b"})
			eds.stream = &key
			eds.watch(b, s.cache, eds.names, nil)
			eds.drain(b, s.cache)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				eds.watch(b, s.cache, nil, nil) // the same acknowledgement again
			}
		})
	}
}

// BenchmarkCacheOnDemandConnect is a delta Envoy's first cluster request
// (the wildcard) with on-demand clusters: it is sent the eager clusters
// alone, a few of many, and what that costs, under the cache's lock, is
// paid once per Envoy connecting, 5,000 at once in a reconnect storm.
func BenchmarkCacheOnDemandConnect(b *testing.B) {
	for _, clusters := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("clusters=%d", clusters), func(b *testing.B) {
			f := fixture{listenerPort: 10000, clusters: map[string][]string{}}
			for i := range clusters {
				f.clusters[fmt.Sprintf("c%05d", i)] = []string{"127.0.0.1:80"}
			}
			s := quietServer()
			if _, err := s.Publish(b.Context(), onDemandFixture(b, f, "c00000", "c00001")); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				c := newCacheClient("cds", true, resource.ClusterType, nil)
				c.watch(b, s.cache, []string{"*"}, nil)
				if r := <-c.dOut; r == nil {
					b.Fatal("no answer")
				}
				c.cancel()
			}
		})
	}
}

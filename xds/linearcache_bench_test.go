package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"testing"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	gcplog "github.com/envoyproxy/go-control-plane/pkg/log"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// These benchmarks run one workload against our resource cache and against
// go-control-plane's LinearCache, one per type URL behind a MuxCache keyed
// by type URL (the combination Contour builds on). Both are driven the way
// go-control-plane's server drives a cache (benchClient), short of gRPC,
// so that what differs is the cache. docs/benchmarks.md ("Our xDS cache
// against LinearCache + MuxCache") has the figures and what they leave out.

// linearMux is one LinearCache per served type behind a MuxCache.
type linearMux struct {
	caches map[string]*cache.LinearCache
	mux    *cache.MuxCache
}

func newLinearMux() *linearMux {
	l := &linearMux{caches: map[string]*cache.LinearCache{}}
	l.mux = &cache.MuxCache{
		Classify:      func(r *cache.Request) string { return r.GetTypeUrl() },
		ClassifyDelta: func(r *cache.DeltaRequest) string { return r.GetTypeUrl() },
		Caches:        map[string]cache.Cache{},
	}
	for _, typeURL := range servedTypes {
		// LinearCache logs a line per watch it finds unchanged: keep
		// formatting out of the measurement.
		c := cache.NewLinearCache(typeURL, cache.WithLogger(gcplog.LoggerFuncs{}))
		l.caches[typeURL] = c
		l.mux.Caches[typeURL] = c
	}
	return l
}

// plainer turns the translator's compact resources into the Envoy
// messages they stand for, remembering each by identity as the snapshotter
// does: a cache that encodes messages itself needs the messages (encoding
// an encoded load assignment through its reflection view would decode it
// first on every encoding, which no real user of LinearCache would do).
type plainer map[types.Resource]types.Resource

func (p plainer) plain(b *testing.B, typeURL string, r types.Resource) types.Resource {
	if m, ok := p[r]; ok {
		return m
	}
	m := r
	switch v := r.(type) {
	case encodedResource:
		mt, err := protoregistry.GlobalTypes.FindMessageByURL(typeURL)
		if err != nil {
			b.Fatal(err)
		}
		m = mt.New().Interface()
		if err := proto.Unmarshal(v.Encoding(), m); err != nil {
			b.Fatal(err)
		}
	case clusterStandIn:
		m = v.Cluster()
	}
	p[r] = m
	return m
}

// byName is one type's resources by name, as LinearCache.SetResources
// takes them.
func (p plainer) byName(b *testing.B, typeURL string, items []types.Resource) map[string]types.Resource {
	out := make(map[string]types.Resource, len(items))
	for _, item := range items {
		out[cache.GetResourceName(item)] = p.plain(b, typeURL, item)
	}
	return out
}

// setAll publishes every type of r to the LinearCaches, replacing what
// each held (SetResources, as Contour refreshes its endpoints), in the
// order our cache answers types.
func (l *linearMux) setAll(b *testing.B, p plainer, r *translate.Resources) {
	lists := map[string][]types.Resource{}
	for _, t := range typedResources(r) {
		lists[t.typeURL] = t.items()
	}
	for _, typeURL := range updateOrder {
		l.caches[typeURL].SetResources(p.byName(b, typeURL, lists[typeURL]))
	}
}

// benchClient plays go-control-plane's server for one stream: one
// subscription per type, a watch open on each, and on each answer what
// the server does before sending it (build the message, take the context,
// record what the client now holds) and then the client's ACK, which
// opens the next watch. It decodes nothing: Envoy's work is not measured.
type benchClient struct {
	delta bool
	types []*benchSub
}

type benchSub struct {
	typeURL string
	names   []string // nil: wildcard
	sub     stream.Subscription
	version string
	nonce   int
	sotw    chan cache.Response
	dlt     chan cache.DeltaResponse
	cancel  func()
	answers int
}

// newBenchClient subscribes as Envoy does: clusters and listeners by
// wildcard, load assignments and route configurations by name.
func newBenchClient(delta bool, byType map[string][]string) *benchClient {
	c := &benchClient{delta: delta}
	for _, typeURL := range servedTypes {
		names, ok := byType[typeURL]
		if !ok {
			continue
		}
		s := &benchSub{typeURL: typeURL, names: names, sotw: make(chan cache.Response, 1), dlt: make(chan cache.DeltaResponse, 2*int(types.UnknownType))}
		if delta {
			s.sub = stream.NewDeltaSubscription(names, nil, nil, true)
		} else {
			s.sub = stream.NewSotwSubscription(names, true)
		}
		c.types = append(c.types, s)
	}
	return c
}

func (c *benchClient) watchAll(b *testing.B, w cache.ConfigWatcher) {
	for _, s := range c.types {
		c.watch(b, w, s, true)
	}
}

// watch opens s's next watch: the first request of the subscription, or
// the ACK of the last answer.
func (c *benchClient) watch(b *testing.B, w cache.ConfigWatcher, s *benchSub, first bool) {
	if s.cancel != nil {
		s.cancel()
	}
	nonce := ""
	if s.nonce > 0 {
		nonce = strconv.Itoa(s.nonce)
	}
	var err error
	if c.delta {
		req := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: s.typeURL, ResponseNonce: nonce}
		if first {
			req.ResourceNamesSubscribe = s.names
		} else {
			s.sub.UpdateResourceSubscriptions(nil, nil)
		}
		s.cancel, err = w.CreateDeltaWatch(req, s.sub, s.dlt)
	} else {
		if !first {
			s.sub.SetResourceSubscription(s.names)
		}
		req := &discoveryv3.DiscoveryRequest{TypeUrl: s.typeURL, VersionInfo: s.version, ResponseNonce: nonce, ResourceNames: s.names}
		s.cancel, err = w.CreateWatch(req, s.sub, s.sotw)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// drain takes every answer there is and acknowledges each; it returns the
// number of resources received.
func (c *benchClient) drain(b *testing.B, w cache.ConfigWatcher) int {
	got := 0
	for _, s := range c.types {
		for {
			select {
			case r := <-s.sotw:
				out, err := r.GetDiscoveryResponse()
				if err != nil {
					b.Fatal(err)
				}
				_ = r.GetContext()
				got += len(out.GetResources())
				s.version = out.GetVersionInfo()
				s.sub.SetReturnedResources(r.GetReturnedResources())
			case r := <-s.dlt:
				out, err := r.GetDeltaDiscoveryResponse()
				if err != nil {
					b.Fatal(err)
				}
				_ = r.GetContext()
				got += len(out.GetResources())
				s.sub.SetReturnedResources(r.GetNextVersionMap())
			default:
				goto next
			}
			s.nonce++
			s.answers++
			c.watch(b, w, s, false)
		}
	next:
	}
	return got
}

// subscriptions is what an Envoy asks of each type for r.
func subscriptions(r *translate.Resources) map[string][]string {
	names := func(items []types.Resource) []string {
		out := make([]string, len(items))
		for i, item := range items {
			out[i] = cache.GetResourceName(item)
		}
		return out
	}
	out := map[string][]string{}
	for _, t := range typedResources(r) {
		switch t.typeURL {
		case resource.ClusterType, resource.ListenerType:
			out[t.typeURL] = nil
		case resource.EndpointType, resource.RouteType:
			out[t.typeURL] = names(t.items())
		}
	}
	return out
}

// translated is the workload of n Ingresses, translated once.
func translated(b *testing.B, n int) *translate.Resources {
	b.Helper()
	w := load.Workload{N: n, Namespace: "bench"}
	res, err := translate.NewTranslator(translate.Options{HTTPPort: 8080}).Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	return res.Resources
}

// BenchmarkCachesPublishAll is a whole configuration (n Ingresses' worth
// of clusters, load assignments, the route configuration and the
// listener) published to k clients that are connected and waiting (as
// after a control plane restart), until every client holds all of it. Our
// cache's part includes what Publish does before the cache (validating,
// encoding and hashing every resource once); LinearCache's includes the
// encoding it does when the first response needs it, and validates
// nothing.
func BenchmarkCachesPublishAll(b *testing.B) {
	for _, size := range []struct{ n, k int }{{1000, 10}, {1000, 100}, {10000, 10}} {
		r := translated(b, size.n)
		subs := subscriptions(r)
		for _, delta := range []bool{false, true} {
			protocol := map[bool]string{false: "sotw", true: "delta"}[delta]
			name := fmt.Sprintf("n=%d/k=%d/%s", size.n, size.k, protocol)
			b.Run("ours/"+name, func(b *testing.B) {
				sent := 0
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					server := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
					clients := connectBenchClients(b, server.cache, delta, subs, size.k)
					b.StartTimer()
					if _, err := server.Publish(context.Background(), r); err != nil {
						b.Fatal(err)
					}
					sent += drainAll(b, server.cache, clients)
				}
				b.ReportMetric(float64(sent)/float64(b.N), "resources/op")
			})
			b.Run("linear+mux/"+name, func(b *testing.B) {
				sent := 0
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					l := newLinearMux()
					clients := connectBenchClients(b, l.mux, delta, subs, size.k)
					p := plainer{}
					for _, t := range typedResources(r) {
						p.byName(b, t.typeURL, t.items()) // the conversion is not the cache's work
					}
					b.StartTimer()
					l.setAll(b, p, r)
					sent += drainAll(b, l.mux, clients)
				}
				b.ReportMetric(float64(sent)/float64(b.N), "resources/op")
			})
		}
	}
}

func connectBenchClients(b *testing.B, w cache.ConfigWatcher, delta bool, subs map[string][]string, k int) []*benchClient {
	clients := make([]*benchClient, k)
	for i := range clients {
		clients[i] = newBenchClient(delta, subs)
		clients[i].watchAll(b, w)
		clients[i].drain(b, w) // the first delta wildcard request is answered at once, if empty
	}
	return clients
}

// drainAll drains every client, each of which must have been sent
// something, and returns the number of resources they were sent in all.
func drainAll(b *testing.B, w cache.ConfigWatcher, clients []*benchClient) int {
	total := 0
	for _, c := range clients {
		got := c.drain(b, w)
		if got == 0 {
			b.Fatal("a client was sent nothing")
		}
		total += got
	}
	return total
}

// BenchmarkCachesEndpointFanout is one endpoint change (an endpoint added
// to or removed from the first Service, through the translator's fast
// path) published to k clients that subscribe to every load assignment by
// name, each answered and acknowledging. LinearCache is given the change
// two ways: SetResources with every load assignment (what Contour does on
// an endpoint change: its versions are per publish, so every load
// assignment is sent again) and UpdateResources with only the load
// assignments the translator handed over anew (the least LinearCache can
// be told).
func BenchmarkCachesEndpointFanout(b *testing.B) {
	for _, k := range []int{10, 100} {
		for _, delta := range []bool{false, true} {
			protocol := map[bool]string{false: "sotw", true: "delta"}[delta]
			name := fmt.Sprintf("n=1000/k=%d/%s", k, protocol)
			b.Run("ours/"+name, func(b *testing.B) {
				w, tr, server, names := publishedLoads(b, 1000)
				clients := connectBenchClients(b, server.cache, delta, map[string][]string{resource.EndpointType: names}, k)
				b.ResetTimer()
				sent := 0
				for i := 0; i < b.N; i++ {
					publishEndpointChange(b, w, tr, server, i)
					sent += drainAll(b, server.cache, clients)
				}
				b.ReportMetric(float64(sent)/float64(b.N), "resources/op")
			})
			for _, set := range []bool{true, false} {
				how := map[bool]string{true: "set", false: "update"}[set]
				b.Run("linear+mux-"+how+"/"+name, func(b *testing.B) {
					benchLinearEndpointChange(b, delta, k, set)
				})
			}
		}
	}
}

func benchLinearEndpointChange(b *testing.B, delta bool, k int, set bool) {
	w := load.Workload{N: 1000, Namespace: "bench"}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	res, err := tr.Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	l, p := newLinearMux(), plainer{}
	l.setAll(b, p, res.Resources)
	subs := subscriptions(res.Resources)
	clients := connectBenchClients(b, l.mux, delta, map[string][]string{resource.EndpointType: subs[resource.EndpointType]}, k)
	prev := res.Resources.Endpoints
	eds := l.caches[resource.EndpointType]
	b.ResetTimer()
	sent := 0
	for i := 0; i < b.N; i++ {
		fast := endpointChange(b, w, tr, i)
		if set {
			items := toResources(fast.Endpoints)
			eds.SetResources(p.byName(b, resource.EndpointType, items))
		} else {
			changed := map[string]types.Resource{}
			for j, la := range fast.Endpoints {
				if j >= len(prev) || types.Resource(prev[j]) != types.Resource(la) {
					changed[la.GetClusterName()] = p.plain(b, resource.EndpointType, la)
				}
			}
			if err := eds.UpdateResources(changed, nil); err != nil {
				b.Fatal(err)
			}
		}
		prev = fast.Endpoints
		sent += drainAll(b, l.mux, clients)
	}
	b.ReportMetric(float64(sent)/float64(b.N), "resources/op")
}

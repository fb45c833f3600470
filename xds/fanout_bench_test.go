package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// fanoutClient is one ADS stream of the fan-out benchmark, subscribed to
// the route configurations by name, acknowledging every response, and
// keeping the last route version it was sent. It dials as the load
// command's fan-out clients do (load.LightDialOptions): it decodes no
// resource, and has Envoy's flow-control windows.
type fanoutClient struct {
	conn *grpc.ClientConn
	mu   sync.Mutex
	ver  string
	at   time.Time
	err  error
}

func (c *fanoutClient) record(version string, err error) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.err = err
		return
	}
	c.ver, c.at = version, now
}

func (c *fanoutClient) state() (string, time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ver, c.at, c.err
}

func dialFanout(b *testing.B, ctx context.Context, addr string, id int, delta bool, routes []string) *fanoutClient {
	b.Helper()
	conn, err := grpc.NewClient(addr, load.LightDialOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	c := &fanoutClient{conn: conn}
	node := &corev3.Node{Id: fmt.Sprint("fanout-", id), Cluster: "bench"}
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	if delta {
		stream, err := ads.DeltaAggregatedResources(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.RouteType, ResourceNamesSubscribe: routes}); err != nil {
			b.Fatal(err)
		}
		go func() {
			for {
				resp, err := stream.Recv()
				if err == nil {
					err = stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.TypeUrl, ResponseNonce: resp.Nonce})
				}
				if err != nil {
					c.record("", err)
					return
				}
				c.record(resp.SystemVersionInfo, nil)
			}
		}()
		return c
	}
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: resource.RouteType, ResourceNames: routes}); err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			resp, err := stream.Recv()
			if err == nil {
				err = stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.TypeUrl, ResourceNames: routes,
					VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce})
			}
			if err != nil {
				c.record("", err)
				return
			}
			c.record(resp.VersionInfo, nil)
		}
	}()
	return c
}

// awaitFanout waits until every client's route version differs from
// before (or, with before nil, is want), and returns when each had it
// after since.
func awaitFanout(b *testing.B, clients []*fanoutClient, before []string, want string, since time.Time) []time.Duration {
	b.Helper()
	arrivals := make([]time.Duration, len(clients))
	pending := make([]int, len(clients))
	for i := range pending {
		pending[i] = i
	}
	deadline := time.Now().Add(2 * time.Minute) // bounds a hang only
	for len(pending) > 0 {
		next := pending[:0]
		for _, i := range pending {
			v, at, err := clients[i].state()
			if err != nil {
				b.Fatalf("client %d: %v", i, err)
			}
			if (before == nil && v == want) || (before != nil && v != "" && v != before[i]) {
				arrivals[i] = at.Sub(since)
				continue
			}
			next = append(next, i)
		}
		pending = next
		if len(pending) > 0 {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d clients never had the routes", len(pending), len(clients))
			}
			time.Sleep(time.Millisecond)
		}
	}
	return arrivals
}

// fanoutClients is how many ADS streams the fan-out benchmark connects:
// issue 31's fan-out target.
const fanoutClients = 2000

// BenchmarkFanoutIngressChange is the load command's fan-out Ingress
// change short of the API server and the translator: at 1,000 Ingresses
// (below the route scopes' threshold, so one route configuration of every
// plain-HTTP host), 2,000 ADS streams over loopback subscribe to the route
// configurations, and each iteration publishes the routes with and then
// without one more Ingress, timed until every stream had each. The
// clients dial as the load command's do (load.LightDialOptions) and run
// on the same cores.
// Reported: the p50 and last arrival over the streams, and the bytes of
// route configuration sent to each.
func BenchmarkFanoutIngressChange(b *testing.B) {
	for _, delta := range []bool{true, false} {
		b.Run(map[bool]string{true: "delta", false: "sotw"}[delta], func(b *testing.B) {
			w := load.Workload{N: 1000, Namespace: "bench"}
			tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
			base := w.State()
			without, err := tr.Translate(base)
			if err != nil {
				b.Fatal(err)
			}
			st := *base
			st.Ingresses = append(slices.Clip(base.Ingresses), w.ChangeIngress("bench", 0, 0))
			with, err := tr.Translate(&st)
			if err != nil {
				b.Fatal(err)
			}
			server := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
			snap, err := server.Publish(context.Background(), without.Resources)
			if err != nil {
				b.Fatal(err)
			}
			var routes []string
			size := 0
			for name, r := range snap.GetResources(resource.RouteType) {
				routes = append(routes, name)
				size += proto.Size(r)
			}
			sort.Strings(routes)
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			ts := serveOn(b, server, lis, &logBuffer{})
			ctx, cancel := context.WithCancel(context.Background())
			clients := make([]*fanoutClient, fanoutClients)
			b.Cleanup(func() {
				cancel()
				for _, c := range clients {
					if c != nil {
						c.conn.Close()
					}
				}
			})
			for i := range clients {
				clients[i] = dialFanout(b, ctx, ts.addr, i, delta, routes)
			}
			awaitFanout(b, clients, nil, snap.GetVersion(resource.RouteType), time.Now())

			var p50, last time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := with
				if i%2 == 1 {
					res = without
				}
				before := make([]string, len(clients))
				for j, c := range clients {
					before[j], _, _ = c.state()
				}
				start := time.Now()
				if _, err := server.Publish(context.Background(), res.Resources); err != nil {
					b.Fatal(err)
				}
				arrivals := awaitFanout(b, clients, before, "", start)
				slices.Sort(arrivals)
				p50 += arrivals[len(arrivals)/2]
				last += arrivals[len(arrivals)-1]
			}
			b.ReportMetric(float64(p50.Milliseconds())/float64(b.N), "p50-ms")
			b.ReportMetric(float64(last.Milliseconds())/float64(b.N), "last-ms")
			b.ReportMetric(float64(size), "route-bytes")
		})
	}
}

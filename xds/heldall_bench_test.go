package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// BenchmarkVHDSStreamHeld is what a delta stream taking its virtual hosts
// over VHDS costs the control plane's heap once it holds them all: the
// load command's workload of 1,000 Ingresses (2,000 virtual hosts),
// rendered as serve renders it by default, served over gRPC to streams
// that subscribe to the route configuration by name, then to the virtual
// hosts as Envoy 1.40's VHDS does (a wildcard: the held state is one
// entry, heldall.go) or by the route configuration's name as a namespace
// (e2e/adsclient's way: a map of every virtual host). Each iteration
// connects streamsPerRound more streams; the heap after collections,
// less the heap before any, divided by the streams, is heap-B/stream.
func BenchmarkVHDSStreamHeld(b *testing.B) {
	const streamsPerRound = 100
	w := load.Workload{N: 1000, Namespace: "bench"}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, DeltaVirtualHostDiscovery: true, OnDemandClusters: true})
	res, err := tr.Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Resources.VirtualHosts) != 2*w.N {
		b.Fatalf("%d virtual hosts, want %d", len(res.Resources.VirtualHosts), 2*w.N)
	}
	route := res.Resources.DeltaRoutes[0].GetName()
	for _, way := range []struct {
		name      string
		subscribe []string
	}{{"wildcard", nil}, {"namespace", []string{route}}} {
		b.Run(way.name, func(b *testing.B) {
			heldPerStream(b, res.Resources, streamsPerRound, func(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, id int) error {
				return holdVirtualHosts(ctx, ads, id, route, way.subscribe, len(res.Resources.VirtualHosts))
			})
		})
	}
}

// holdVirtualHosts opens a delta stream that subscribes to the route
// configuration route, then to its virtual hosts (subscribe: nil, a
// wildcard), acknowledging each response, and returns once it holds want
// virtual hosts, leaving the stream open until ctx ends.
func holdVirtualHosts(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, id int, route string, subscribe []string, want int) error {
	stream, err := ads.DeltaAggregatedResources(ctx)
	if err != nil {
		return err
	}
	node := &corev3.Node{Id: fmt.Sprint("vhds-", id), Cluster: "bench"}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: resource.RouteType, ResourceNamesSubscribe: []string{route}}); err != nil {
		return err
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.VirtualHostType, ResourceNamesSubscribe: subscribe}); err != nil {
		return err
	}
	held := map[string]bool{}
	for len(held) < want {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		if resp.GetTypeUrl() == resource.VirtualHostType {
			for _, r := range resp.GetResources() {
				held[r.GetName()] = true
			}
		}
		if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
	}
	return nil
}

// heldPerStream serves r over gRPC and connects streamsPerRound more
// streams (hold opens each and returns once it holds what it asks for)
// in each iteration, reporting the heap after collections, less the heap
// before any, divided by the streams, as heap-B/stream.
func heldPerStream(b *testing.B, r *translate.Resources, streamsPerRound int, hold func(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, id int) error) {
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := s.Publish(context.Background(), r); err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ts := serveOn(b, s, lis, &logBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conn, err := grpc.NewClient(ts.addr, load.LightDialOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)

	base := heapInUse()
	streams := 0
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		errs := make(chan error, streamsPerRound)
		for range streamsPerRound {
			streams++
			wg.Add(1)
			go func(id int) {
				defer wg.Done()
				errs <- hold(ctx, ads, id)
			}(streams)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(heapInUse()-base)/float64(streams), "heap-B/stream")
}

// heapInUse is the heap in use after two collections: the second frees
// what the first left in sync.Pools (gRPC's buffers) as their victims.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

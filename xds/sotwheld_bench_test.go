package xds

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// BenchmarkSotWStreamHeld is what a SotW stream costs the control plane's
// heap once it holds every load assignment, as a SotW Envoy does: the
// load command's workload of 1,000 Ingresses (10,000 load assignments),
// rendered as serve renders it by default, served over gRPC to streams
// that ask for the clusters and then name every load assignment,
// acknowledging each response. Each iteration connects streamsPerRound
// more streams; heap-B/stream is as in BenchmarkVHDSStreamHeld
// (docs/benchmarks.md, "Issue 31: what a SotW client costs").
func BenchmarkSotWStreamHeld(b *testing.B) {
	const streamsPerRound = 50
	w := load.Workload{N: 1000, Namespace: "bench"}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, DeltaVirtualHostDiscovery: true, OnDemandClusters: true})
	res, err := tr.Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, len(res.Resources.Endpoints))
	for i, e := range res.Resources.Endpoints {
		names[i] = e.GetClusterName()
	}
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := s.Publish(context.Background(), res.Resources); err != nil {
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
				errs <- holdLoadAssignments(ctx, ads, id, names)
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

// holdLoadAssignments opens a SotW stream that asks for the clusters and
// names every load assignment of names, acknowledging each response as
// an Envoy does (naming them all again), and returns once it was sent
// the load assignments, leaving the stream open until ctx ends.
func holdLoadAssignments(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, id int, names []string) error {
	stream, err := ads.StreamAggregatedResources(ctx)
	if err != nil {
		return err
	}
	node := &corev3.Node{Id: fmt.Sprint("sotw-", id), Cluster: "bench"}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
		return err
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: names}); err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		var subscribed []string
		if resp.GetTypeUrl() == resource.EndpointType {
			subscribed = names
		}
		if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResourceNames: subscribed, VersionInfo: resp.GetVersionInfo(), ResponseNonce: resp.GetNonce()}); err != nil {
			return err
		}
		if resp.GetTypeUrl() == resource.EndpointType && resp.GetVersionInfo() != "" {
			return nil
		}
	}
}

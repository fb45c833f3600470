package xds

import (
	"context"
	"fmt"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

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
	heldPerStream(b, res.Resources, streamsPerRound, func(ctx context.Context, ads discoveryv3.AggregatedDiscoveryServiceClient, id int) error {
		return holdLoadAssignments(ctx, ads, id, names)
	})
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

package xds

import (
	"context"
	"strings"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

// Large configurations go through in both directions: a CDS response and an
// EDS request (which names every cluster) each well above gRPC's 4 MiB
// default limit.
func TestLargeMessagesBothWays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts := startServer(t)
	f := fixture{listenerPort: 10080, clusters: map[string][]string{}}
	long := strings.Repeat("x", 100_000)
	for i := range 60 {
		f.clusters[long+string(rune('A'+i%26))+string(rune('a'+i/26))] = []string{"10.0.0.1:80"}
	}
	ts.publish(t, f)
	const limit = 4 << 20

	conn, err := grpc.NewClient(ts.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: "large"}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{Node: node, TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	clusters, err := stream.Recv()
	if err != nil {
		t.Fatalf("receiving a large CDS response: %v", err)
	}
	if size := protoSize(clusters); size <= limit || len(clusters.GetResources()) != 60 {
		t.Fatalf("CDS response of %d bytes with %d clusters; the test needs more than %d bytes and 60 clusters", size, len(clusters.GetResources()), limit)
	}

	eds := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: sortedKeys(f.clusters)}
	if size := protoSize(eds); size <= limit {
		t.Fatalf("EDS request of %d bytes; the test needs more than %d", size, limit)
	}
	if err := stream.Send(eds); err != nil {
		t.Fatal(err)
	}
	endpoints, err := stream.Recv()
	if err != nil {
		t.Fatalf("the server did not take a large EDS request: %v", err)
	}
	if endpoints.GetTypeUrl() != resource.EndpointType || len(endpoints.GetResources()) != 60 {
		t.Fatalf("got %s with %d resources, want the 60 ClusterLoadAssignments", endpoints.GetTypeUrl(), len(endpoints.GetResources()))
	}
}

func protoSize(m proto.Message) int { return proto.Size(m) }

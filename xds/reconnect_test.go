package xds

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// An Envoy that reconnects to a restarted control plane before its first
// snapshot, naming the version it already runs, is answered once the
// snapshot is published, even though the version is the same: otherwise
// its stream stays silent (CSDS knows nothing of it) until the cluster
// changes.
func TestReconnectBeforeFirstSnapshotIsAnswered(t *testing.T) {
	res, err := translate.Translate(kube.NewState(), translate.Options{HTTPPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The version the Envoy runs: that of the same content, as published
	// by the previous process.
	previous := NewServer(slog.New(slog.DiscardHandler))
	snap, err := previous.Publish(ctx, res.Resources)
	if err != nil {
		t.Fatal(err)
	}
	version := snap.GetVersion(resource.ListenerType)

	restarted := NewServer(slog.New(slog.DiscardHandler))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- restarted.ServeListener(ctx, lis) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&discoveryv3.DiscoveryRequest{
		Node: &corev3.Node{Id: "reconnecting"}, TypeUrl: resource.ListenerType, VersionInfo: version,
	}); err != nil {
		t.Fatal(err)
	}
	// The request is in before the snapshot: wait until the server has it.
	for deadline := time.Now().Add(10 * time.Second); len(restarted.clients.list()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server never registered the request")
		}
	}
	if _, err := restarted.Publish(ctx, res.Resources); err != nil {
		t.Fatal(err)
	}
	got := make(chan *discoveryv3.DiscoveryResponse, 1)
	go func() {
		if resp, err := stream.Recv(); err == nil {
			got <- resp
		}
	}()
	select {
	case resp := <-got:
		if resp.GetVersionInfo() != version || len(resp.GetResources()) != len(res.Resources.Listeners) {
			t.Errorf("answered with version %s and %d listeners, want %s and %d", resp.GetVersionInfo(), len(resp.GetResources()), version, len(res.Resources.Listeners))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the reconnecting Envoy after the first snapshot")
	}
}

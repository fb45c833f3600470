package adsclient

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/xds"
)

// The delta client against the real xds.Server: the same snapshots as over
// state of the world, built from responses that carry only what changed,
// with removals honoured and subscriptions following the clusters.
func TestDeltaClientFollowsPublishedSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := serve(t, ctx)

	publish(t, server.Server, manifests("10.0.0.1"))
	c, err := Dial(ctx, server.address, Options{NodeID: t.Name(), Delta: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	const cluster = "default/coffee/80"
	snap, err := c.WaitFor(ctx, func(s *Snapshot) bool {
		return endpointOf(s, cluster) == "10.0.0.1:8080" && routeCluster(s, "cafe.example.com", "/coffee") == cluster
	})
	if err != nil {
		t.Fatalf("first snapshot: %v (have %s)", err, describe(snap))
	}
	for _, typeURL := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType} {
		if snap.Versions[typeURL] == "" {
			t.Errorf("no system version recorded for %s", typeURL)
		}
	}

	// Each update arrives only if the previous response was ACKed.
	for _, ip := range []string{"10.0.0.2", "10.0.0.3"} {
		publish(t, server.Server, manifests(ip))
		if snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return endpointOf(s, cluster) == ip+":8080" }); err != nil {
			t.Fatalf("endpoint update to %s: %v (have %s)", ip, err, describe(snap))
		}
	}

	// Without the Ingress the cluster is named in removed_resources, and
	// its load assignment must go with the unsubscription.
	publish(t, server.Server, strings.SplitN(manifests("10.0.0.3"), "---", 2)[1])
	snap, err = c.WaitFor(ctx, func(s *Snapshot) bool { return len(s.Clusters) == 0 && len(s.Endpoints) == 0 })
	if err != nil {
		t.Fatalf("removal: %v (have %s)", err, describe(snap))
	}
	if len(snap.Rejected) > 0 {
		t.Errorf("the client rejected valid responses: %q", snap.Rejected)
	}
}

func TestDiffSorted(t *testing.T) {
	for _, tc := range []struct {
		prev, next, added, removed []string
	}{
		{nil, nil, nil, nil},
		{nil, []string{"a", "b"}, []string{"a", "b"}, nil},
		{[]string{"a", "b"}, nil, nil, []string{"a", "b"}},
		{[]string{"a", "c", "e"}, []string{"b", "c", "d", "f"}, []string{"b", "d", "f"}, []string{"a", "e"}},
		{[]string{"x"}, []string{"x"}, nil, nil},
	} {
		added, removed := diffSorted(tc.prev, tc.next)
		if !slices.Equal(added, tc.added) || !slices.Equal(removed, tc.removed) {
			t.Errorf("diffSorted(%q, %q) = %q, %q; want %q, %q", tc.prev, tc.next, added, removed, tc.added, tc.removed)
		}
	}
}

type testServer struct {
	*xds.Server
	address string
}

// serve runs an xds.Server on a loopback port until the test ends.
func serve(t *testing.T, ctx context.Context) testServer {
	t.Helper()
	server := xds.NewServer(slog.New(slog.DiscardHandler))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	serveCtx, stopServing := context.WithCancel(ctx)
	go func() { served <- server.ServeListener(serveCtx, lis) }()
	t.Cleanup(func() {
		stopServing()
		if err := <-served; err != nil {
			t.Errorf("serving: %v", err)
		}
	})
	return testServer{Server: server, address: lis.Addr().String()}
}

package load

import (
	"context"
	"log/slog"
	"maps"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// A fan-out client follows ingress-xds's xDS server alike over gRPC's
// client and over its own HTTP/2 (-fanout-h2), delta and SotW: each comes
// up to date with every type the server serves it, then has an endpoint
// change.
func TestLightClientsFollowTheServer(t *testing.T) {
	w := Workload{N: 20, Namespace: "fanout"}
	var objs kube.Objects
	for i := range w.N {
		objs.Ingresses = append(objs.Ingresses, w.Ingress(i))
	}
	for s := range w.Services() {
		objs.Services = append(objs.Services, w.Service(s))
		objs.EndpointSlices = append(objs.EndpointSlices, w.EndpointSlice(s, EndpointsPerSlice))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	server := xds.NewServer(slog.New(slog.DiscardHandler))
	publish := func() *xds.Snapshot {
		t.Helper()
		res, err := translate.NewTranslator(translate.Options{HTTPPort: 8080}).Translate(objs.State(kube.ClassFilter{WatchClassless: true}))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := server.Publish(ctx, res.Resources)
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	snap := publish()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- server.ServeListener(ctx, lis) }()
	defer func() {
		cancel()
		<-served
	}()

	subs := names{
		routes:    slices.Sorted(maps.Keys(snap.GetResources(resource.RouteType))),
		endpoints: slices.Sorted(maps.Keys(snap.GetResources(resource.EndpointType))),
	}
	if len(subs.routes) == 0 || len(subs.endpoints) == 0 {
		t.Fatalf("the workload gave %d route configurations and %d load assignments", len(subs.routes), len(subs.endpoints))
	}
	type client struct {
		name string
		*lightClient
	}
	var clients []client
	for _, delta := range []bool{true, false} {
		for _, h2 := range []bool{false, true} {
			c, err := dialLight(ctx, lis.Addr().String(), len(clients), subs, delta, h2)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			clients = append(clients, client{map[bool]string{true: "delta", false: "SotW"}[delta] + map[bool]string{true: " over -fanout-h2", false: " over gRPC's client"}[h2], c})
		}
	}
	// await waits until every client holds version of typeURL.
	await := func(typeURL string, snap *xds.Snapshot) {
		t.Helper()
		want := snap.GetVersion(typeURL)
		for _, c := range clients {
			for {
				got, _, err := c.state(typeURL)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if got == want {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatalf("%s: %s at version %q, want %q", c.name, typeURL, got, want)
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
	}
	for _, typeURL := range []string{resource.ListenerType, resource.ClusterType, resource.RouteType, resource.EndpointType} {
		await(typeURL, snap)
	}

	objs.EndpointSlices[0] = w.EndpointSlice(0, EndpointsPerSlice+1)
	changed := publish()
	if changed.GetVersion(resource.EndpointType) == snap.GetVersion(resource.EndpointType) {
		t.Fatal("the endpoint change left the load assignments' version as it was")
	}
	await(resource.EndpointType, changed)
}

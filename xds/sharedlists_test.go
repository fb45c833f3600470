package xds

import (
	"fmt"
	"testing"
	"unsafe"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// manyClusters is a fixture with n clusters, each with one endpoint.
func manyClusters(n int) fixture {
	f := fixture{listenerPort: 10001, clusters: map[string][]string{}}
	for i := range n {
		f.clusters[fmt.Sprintf("c%03d", i)] = []string{fmt.Sprintf("10.0.%d.%d:80", i/250, i%250+1)}
	}
	return f
}

// TestSharedListsEncodeOnce checks that from the second whole answer of a
// content the codec sends one encoding of the list, the same bytes for
// every response, decoding to the same message; that the first is encoded
// as before; and that nothing is shared once the content is replaced.
func TestSharedListsEncodeOnce(t *testing.T) {
	s := manyClusters(5).published(t)
	ts := s.cache.types[resource.ClusterType]
	l := s.cache.lists
	codec := newResponseCodec(l)
	sotw := func(nonce string) *discoveryv3.DiscoveryResponse {
		return &discoveryv3.DiscoveryResponse{VersionInfo: ts.version, TypeUrl: resource.ClusterType, Nonce: nonce, Resources: ts.anys}
	}
	encode := func(m proto.Message) mem.BufferSlice {
		t.Helper()
		data, err := codec.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), got); err != nil || !proto.Equal(got, m) {
			t.Fatalf("decoded %v (error %v), want %v", got, err, m)
		}
		return data
	}

	l.noteSotw(ts)
	if shared(encode(sotw("1")), encode(sotw("2"))) {
		t.Error("SotW: a content sent whole once was sent from a shared encoding")
	}
	l.noteSotw(ts)
	if !shared(encode(sotw("3")), encode(sotw("4"))) {
		t.Error("SotW: a content sent whole twice was encoded for each response")
	}

	if l.deltaList(ts) != nil {
		t.Error("delta: the first whole answer was given the shared list")
	}
	list := l.deltaList(ts)
	if len(list) != len(ts.anys) {
		t.Fatalf("delta: the shared list has %d resources, want %d", len(list), len(ts.anys))
	}
	for i, r := range list {
		if r.GetName() != ts.names[i] || r.GetVersion() != ts.hashes[i] || r.GetResource() != ts.anys[i] {
			t.Errorf("delta: resource %d is %s at %s, want %s at %s", i, r.GetName(), r.GetVersion(), ts.names[i], ts.hashes[i])
		}
	}
	delta := func(nonce string) *discoveryv3.DeltaDiscoveryResponse {
		return &discoveryv3.DeltaDiscoveryResponse{SystemVersionInfo: ts.version, TypeUrl: resource.ClusterType, Nonce: nonce, Resources: list}
	}
	if !shared(encode(delta("5")), encode(delta("6"))) {
		t.Error("delta: the shared list was encoded for each response")
	}

	l.drop(ts)
	if shared(encode(sotw("7")), encode(sotw("8"))) || shared(encode(delta("9")), encode(delta("10"))) {
		t.Error("a content replaced is still sent from a shared encoding")
	}
}

// shared says whether two encodings hold the same buffer of more than a
// few bytes: the list's, not a copy of it.
func shared(a, b mem.BufferSlice) bool {
	for _, x := range a {
		for _, y := range b {
			dx, dy := x.ReadOnlyData(), y.ReadOnlyData()
			if len(dx) > 64 && len(dx) == len(dy) && unsafe.SliceData(dx) == unsafe.SliceData(dy) {
				return true
			}
		}
	}
	return false
}

// TestSharedListsOverTheWire connects several clients, SotW and delta, to a
// serving Server, each asking for every cluster and load assignment, and
// checks that each decodes every resource at its version: the later
// clients are sent the shared encodings.
func TestSharedListsOverTheWire(t *testing.T) {
	srv := startServer(t)
	f := manyClusters(5)
	srv.publish(t, f)
	snap := srv.Snapshot()
	conn, err := grpc.NewClient(srv.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ads := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	endpoints := sortedKeys(f.clusters)
	for i := range 3 {
		for _, typeURL := range []string{resource.ClusterType, resource.EndpointType} {
			var names []string
			if typeURL == resource.EndpointType {
				names = endpoints
			}
			want := snap.GetVersionMap(typeURL)
			sotw, err := ads.StreamAggregatedResources(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := sotw.Send(&discoveryv3.DiscoveryRequest{TypeUrl: typeURL, ResourceNames: names}); err != nil {
				t.Fatal(err)
			}
			resp, err := sotw.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.GetResources()) != len(want) {
				t.Errorf("SotW client %d: %d of %s, want %d", i, len(resp.GetResources()), typeName(typeURL), len(want))
			}
			for _, a := range resp.GetResources() {
				if _, ok := want[resourceName(a.GetValue())]; !ok {
					t.Errorf("SotW client %d: %s %q not in the snapshot", i, typeName(typeURL), resourceName(a.GetValue()))
				}
			}
			delta, err := ads.DeltaAggregatedResources(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			subscribe := names
			if subscribe == nil {
				subscribe = []string{"*"}
			}
			if err := delta.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: typeURL, ResourceNamesSubscribe: subscribe}); err != nil {
				t.Fatal(err)
			}
			dresp, err := delta.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if len(dresp.GetResources()) != len(want) {
				t.Errorf("delta client %d: %d of %s, want %d", i, len(dresp.GetResources()), typeName(typeURL), len(want))
			}
			for _, r := range dresp.GetResources() {
				if v, ok := want[r.GetName()]; !ok || v != r.GetVersion() || resourceName(r.GetResource().GetValue()) != r.GetName() {
					t.Errorf("delta client %d: %s %q at %s, want it at %s", i, typeName(typeURL), r.GetName(), r.GetVersion(), v)
				}
			}
		}
	}
}

// BenchmarkSharedListSend encodes, as each stream's send does, the SotW
// response carrying every cluster and the delta one carrying every load
// assignment at 1,000 Ingresses: with each response encoded on its own
// (one), and from the second whole answer of the content on (shared).
// B/op is what each Envoy connecting costs the codec.
func BenchmarkSharedListSend(b *testing.B) {
	_, _, server, _ := publishedLoads(b, 1000)
	clusters := server.cache.types[resource.ClusterType]
	endpoints := server.cache.types[resource.EndpointType]
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "one", true: "shared"}[shared]
		lists := newSharedLists()
		var loads []*discoveryv3.Resource
		if shared {
			lists.noteSotw(clusters)
			lists.noteSotw(clusters)
			lists.deltaList(endpoints)
			loads = lists.deltaList(endpoints)
		} else {
			loads = deltaResources(endpoints, nil, true)
		}
		codec := newResponseCodec(lists)
		sotw := &discoveryv3.DiscoveryResponse{VersionInfo: clusters.version, TypeUrl: resource.ClusterType, Nonce: "1", Resources: clusters.anys}
		delta := &discoveryv3.DeltaDiscoveryResponse{SystemVersionInfo: endpoints.version, TypeUrl: resource.EndpointType, Nonce: "1", Resources: loads}
		for protocol, m := range map[string]proto.Message{"sotw-clusters": sotw, "delta-endpoints": delta} {
			b.Run(protocol+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := codec.Marshal(m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

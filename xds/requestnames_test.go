package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// servedFor is a servedNames holding names as the current load
// assignments.
func servedFor(names ...string) *servedNames {
	n := &servedNames{}
	n.set([]typeChange{{typeURL: resource.EndpointType, state: &typeSnapshot{names: names, index: newNameIndex(names)}}})
	return n
}

// requestCases are encoded SotW requests: well formed, and what the short
// way must hand to gRPC's codec.
func requestCases(t testing.TB) map[string][]byte {
	t.Helper()
	enc := func(req *discoveryv3.DiscoveryRequest) []byte {
		b, err := proto.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	names := func(ns ...string) []byte {
		var b []byte
		for _, n := range ns {
			b = protowire.AppendTag(b, requestNamesField, protowire.BytesType)
			b = protowire.AppendString(b, n)
		}
		return b
	}
	ack := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v1", ResponseNonce: "7", ResourceNames: []string{"a", "b", "c"}}
	first := &discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "envoy-1", Cluster: "ingress"}, TypeUrl: resource.EndpointType, ResourceNames: []string{"c", "x", "a"}}
	nack := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v1", ResponseNonce: "8", ResourceNames: []string{"b"},
		ErrorDetail: &statuspb.Status{Code: 3, Message: "rejected"}}
	other := &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNames: []string{"a"}}
	unknown := protowire.AppendTag(enc(ack), 99, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 5)
	return map[string][]byte{
		"acknowledgement":           enc(ack),
		"first request, with node":  enc(first),
		"rejection":                 enc(nack),
		"another type's index":      enc(other),
		"no names":                  enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v2"}),
		"empty":                     nil,
		"names before the type":     append(names("b", "a"), enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType})...),
		"type URL twice":            append(enc(ack), enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType})...),
		"an unknown field":          unknown,
		"an empty name":             append(enc(ack), names("")...),
		"a name not UTF-8":          append(enc(ack), names("a\xff")...),
		"a name as a varint":        protowire.AppendVarint(protowire.AppendTag(enc(ack), requestNamesField, protowire.VarintType), 3),
		"a name cut short":          enc(ack)[:len(enc(ack))-1],
		"a tag cut short":           append(enc(ack), 0x80),
		"type URL not UTF-8":        protowire.AppendString(protowire.AppendTag(names("a"), requestTypeURLField, protowire.BytesType), "\xfe"),
		"a resource locator":        enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a"}, ResourceLocators: []*discoveryv3.ResourceLocator{{Name: "b"}}}),
		"a node of another version": protowire.AppendBytes(protowire.AppendTag(enc(ack), 2, protowire.BytesType), []byte{0x0a, 0x02, 'i', 'd'}),
		"every name, another order": enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v1", ResponseNonce: "9", ResourceNames: []string{"c", "a", "b"}}),
		"one name twice":            enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", "b", "a"}}),
		"a long name among them":    enc(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", strings.Repeat("x", 200), "b"}}),
	}
}

// sameRequest says whether a request decoded against the served names is
// the one gRPC's codec decoded: equal, or, when it was given the served
// list (it names each served name once), equal but for the names' order,
// which means nothing (a request's names are a set).
func sameRequest(served *servedNames, short, grpcs *discoveryv3.DiscoveryRequest) bool {
	x := served.index(short.GetTypeUrl())
	if x == nil || len(short.ResourceNames) == 0 || !sameList(short.ResourceNames, x.names) {
		return proto.Equal(short, grpcs)
	}
	a, b := proto.Clone(short).(*discoveryv3.DiscoveryRequest), proto.Clone(grpcs).(*discoveryv3.DiscoveryRequest)
	slices.Sort(a.ResourceNames)
	slices.Sort(b.ResourceNames)
	return proto.Equal(a, b)
}

// decodeBoth decodes b with the served names and with gRPC's codec.
func decodeBoth(t testing.TB, served *servedNames, b []byte) (short, grpcs *discoveryv3.DiscoveryRequest, shortErr, grpcErr error) {
	codec := newResponseCodec(nil)
	plain := codec
	codec.names = served
	short, grpcs = &discoveryv3.DiscoveryRequest{}, &discoveryv3.DiscoveryRequest{}
	shortErr = codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, short)
	grpcErr = plain.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, grpcs)
	return short, grpcs, shortErr, grpcErr
}

// TestRequestsDecodedAgainstServedNames: a SotW request decodes to the
// very request gRPC's codec decodes, or fails as it does, whatever its
// bytes; and a name the cache serves is the cache's own string, not a
// copy (what saves the allocation and the UTF-8 check).
func TestRequestsDecodedAgainstServedNames(t *testing.T) {
	served := servedFor("a", "b", "c")
	for name, b := range requestCases(t) {
		t.Run(name, func(t *testing.T) {
			short, grpcs, shortErr, grpcErr := decodeBoth(t, served, b)
			if (shortErr == nil) != (grpcErr == nil) {
				t.Fatalf("decoded against the served names: error %v; gRPC's codec: error %v", shortErr, grpcErr)
			}
			if grpcErr == nil && !sameRequest(served, short, grpcs) {
				t.Fatalf("decoded against the served names:\n%v\ngRPC's codec:\n%v", short, grpcs)
			}
		})
	}
	// Each served name once, in any order: the served list itself, which
	// tells the cache (sotwheld.go); not when one is named twice.
	index := served.index(resource.EndpointType)
	for name, every := range map[string]bool{"acknowledgement": true, "every name, another order": true, "one name twice": false, "first request, with node": false} {
		short, _, err, _ := decodeBoth(t, served, requestCases(t)[name])
		if err != nil {
			t.Fatal(err)
		}
		if got := sameList(short.ResourceNames, index.names); got != every {
			t.Errorf("%s: decoded to the served list %v, want %v", name, got, every)
		}
	}
	short, _, err, _ := decodeBoth(t, served, requestCases(t)["first request, with node"])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range short.ResourceNames {
		j, ok := index.lookup(n)
		if own := ok && unsafe.StringData(index.names[j]) == unsafe.StringData(n); own != ok {
			t.Errorf("name %q: the served string %v, want it for a served name and a copy otherwise", n, own)
		}
	}
}

// TestEachOnceOrdersRemembered: an order of the names found to name each
// served name once is remembered, one entry however often a client
// repeats it, and what is not each name once, or not one run of names,
// is checked whole and not remembered.
func TestEachOnceOrdersRemembered(t *testing.T) {
	served := servedFor("a", "b", "c")
	index := served.index(resource.EndpointType)
	names := func(ns ...string) []byte {
		var b []byte
		for _, n := range ns {
			b = protowire.AppendString(protowire.AppendTag(b, requestNamesField, protowire.BytesType), n)
		}
		return b
	}
	typeURL := protowire.AppendString(protowire.AppendTag(nil, requestTypeURLField, protowire.BytesType), resource.EndpointType)
	for _, c := range []struct {
		name  string
		b     []byte
		every bool
		known int
	}{
		{"an order of its own", append(names("c", "a", "b"), typeURL...), true, 1},
		{"the same order again", append(names("c", "a", "b"), typeURL...), true, 1},
		{"another order", append(names("b", "c", "a"), typeURL...), true, 2},
		{"not one run", slices.Concat(names("a"), typeURL, names("b", "c")), true, 2},
		{"one name twice", append(names("c", "a", "c"), typeURL...), false, 2},
		{"the known order twice over", append(names("c", "a", "b", "c", "a", "b"), typeURL...), false, 2},
	} {
		short, grpcs, err, grpcErr := decodeBoth(t, served, c.b)
		if err != nil || grpcErr != nil {
			t.Fatalf("%s: %v, %v", c.name, err, grpcErr)
		}
		if !sameRequest(served, short, grpcs) {
			t.Errorf("%s: decoded to %v, gRPC's codec %v", c.name, short.ResourceNames, grpcs.ResourceNames)
		}
		if got := sameList(short.ResourceNames, index.names); got != c.every {
			t.Errorf("%s: decoded to the served list %v, want %v", c.name, got, c.every)
		}
		if got := len(index.orders.known); got != c.known {
			t.Errorf("%s: %d orders remembered, want %d", c.name, got, c.known)
		}
	}
}

// FuzzRequestNames: whatever the bytes, decoding against the served names
// agrees with gRPC's codec.
func FuzzRequestNames(f *testing.F) {
	for _, b := range requestCases(f) {
		f.Add(b)
	}
	served := servedFor("a", "b", "c", "ns/svc/80")
	f.Fuzz(func(t *testing.T, b []byte) {
		short, grpcs, shortErr, grpcErr := decodeBoth(t, served, b)
		if (shortErr == nil) != (grpcErr == nil) {
			t.Fatalf("decoded against the served names: error %v; gRPC's codec: error %v", shortErr, grpcErr)
		}
		if grpcErr == nil && !sameRequest(served, short, grpcs) {
			t.Fatalf("decoded against the served names:\n%v\ngRPC's codec:\n%v", short, grpcs)
		}
	})
}

// BenchmarkDecodeSotWAck is the control plane's part of one SotW Envoy's
// acknowledgement of an endpoint change at 1,000 and 10,000 Ingresses: a
// request naming its 10,000 or 100,000 load assignments, in the frames it
// came in, decoded by gRPC's codec and against the served names.
func BenchmarkDecodeSotWAck(b *testing.B) {
	for _, count := range []int{10000, 100000} {
		names := make([]string, count)
		for i := range names {
			names[i] = fmt.Sprintf("bench/svc-%05d/80", i)
		}
		// A SotW Envoy names them in an order of its own (a hash set's),
		// the same in each request.
		envoyOrder := slices.Clone(names)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(envoyOrder), func(i, j int) { envoyOrder[i], envoyOrder[j] = envoyOrder[j], envoyOrder[i] })
		served := servedFor(names...)
		served.index(resource.EndpointType).nameMap()
		for _, way := range []struct {
			name  string
			names *servedNames
			order []string
		}{{"grpc", nil, names}, {"served-names", served, names}, {"served-names/envoy-order", served, envoyOrder}} {
			data, err := proto.Marshal(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v1", ResponseNonce: "12", ResourceNames: way.order})
			if err != nil {
				b.Fatal(err)
			}
			// As gRPC hands a message over: in the buffers of the HTTP/2
			// frames it came in, of 16 KiB.
			var frames mem.BufferSlice
			for rest := data; len(rest) > 0; rest = rest[min(len(rest), 16<<10):] {
				frames = append(frames, mem.SliceBuffer(rest[:min(len(rest), 16<<10)]))
			}
			b.Run(fmt.Sprintf("%s/%d", way.name, count), func(b *testing.B) {
				codec := newResponseCodec(nil)
				codec.names = way.names
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for range b.N {
					req := &discoveryv3.DiscoveryRequest{}
					if err := codec.Unmarshal(frames, req); err != nil {
						b.Fatal(err)
					}
					if len(req.ResourceNames) != len(names) {
						b.Fatalf("%d names", len(req.ResourceNames))
					}
				}
			})
		}
	}
}

// BenchmarkSotWAckToSubscription is what the control plane does with one
// SotW Envoy's acknowledgement of an endpoint change at 1,000 Ingresses
// before its subscription is built: the request naming its 10,000 load
// assignments decoded against the served names, and the names the
// subscription is to keep made the cache's (the request callback).
func BenchmarkSotWAckToSubscription(b *testing.B) {
	f := fixture{listenerPort: 10080, clusters: map[string][]string{}}
	for i := range 10000 {
		f.clusters[fmt.Sprintf("bench/svc-%05d/80", i)] = []string{"127.0.0.1:1"}
	}
	s := f.published(b)
	names := slices.Clone(s.cache.served.index(resource.EndpointType).names)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] }) // as BenchmarkDecodeSotWAck's Envoy
	data, err := proto.Marshal(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, VersionInfo: "v1", ResponseNonce: "12", ResourceNames: names})
	if err != nil {
		b.Fatal(err)
	}
	codec := newResponseCodec(nil)
	codec.names = &s.cache.served
	cb := callbacks{s}
	b.ReportAllocs()
	for range b.N {
		req := &discoveryv3.DiscoveryRequest{}
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, req); err != nil {
			b.Fatal(err)
		}
		if err := cb.OnStreamRequest(1, req); err != nil {
			b.Fatal(err)
		}
		if len(req.ResourceNames) != len(names) {
			b.Fatalf("%d names", len(req.ResourceNames))
		}
	}
}

package xds

import (
	"bytes"
	"testing"
	"unsafe"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate"
)

// TestResponseCodecSharesLargeEncodings checks that responseCodec encodes
// discovery responses to the same message as gRPC's codec, and sends a
// large resource's encoding from where it is rather than a copy.
func TestResponseCodecSharesLargeEncodings(t *testing.T) {
	large := bytes.Repeat([]byte{0x0a, 0x01, 'x'}, sharedEncodingMin) // a valid encoding, repeated field 1
	small := []byte{0x0a, 0x01, 'y'}
	routes := "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
	withUnknown := &anypb.Any{TypeUrl: routes, Value: large}
	withUnknown.ProtoReflect().SetUnknown(protowireField99())

	cases := []struct {
		name   string
		msg    proto.Message
		shared [][]byte // encodings that must be sent as they are
	}{
		{"sotw, large and small", &discoveryv3.DiscoveryResponse{
			VersionInfo: "v1", TypeUrl: routes, Nonce: "7",
			Resources: []*anypb.Any{{TypeUrl: routes, Value: small}, {TypeUrl: routes, Value: large}, {TypeUrl: routes}, {Value: small}},
		}, [][]byte{large}},
		{"sotw, small only", &discoveryv3.DiscoveryResponse{VersionInfo: "v1", Resources: []*anypb.Any{{TypeUrl: routes, Value: small}}}, nil},
		{"sotw, an Any with fields of its own", &discoveryv3.DiscoveryResponse{VersionInfo: "v1", Resources: []*anypb.Any{withUnknown}}, nil},
		{"delta", &discoveryv3.DeltaDiscoveryResponse{
			SystemVersionInfo: "v2", TypeUrl: routes, Nonce: "8", RemovedResources: []string{"gone"},
			Resources: []*discoveryv3.Resource{
				{Name: "a", Version: "1", Resource: &anypb.Any{TypeUrl: routes, Value: large}, Ttl: durationpb.New(5)},
				{Name: "b", Version: "2", Resource: &anypb.Any{TypeUrl: routes, Value: small}},
				{Name: "c", Version: "3"},
			},
		}, [][]byte{large}},
		{"another message", &discoveryv3.DiscoveryRequest{VersionInfo: "v1", ResourceNames: []string{"a"}}, nil},
	}
	codec := newResponseCodec(nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, err := codec.Marshal(c.msg)
			if err != nil {
				t.Fatal(err)
			}
			got := c.msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(data.Materialize(), got); err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if !proto.Equal(got, c.msg) {
				t.Errorf("decoded %v, want %v", got, c.msg)
			}
			for _, enc := range c.shared {
				if !holds(data, enc) {
					t.Errorf("the %d-byte encoding was copied, not sent as it is", len(enc))
				}
			}
			if want := proto.Size(c.msg); data.Len() != want {
				t.Errorf("%d bytes, want %d", data.Len(), want)
			}
		})
	}
}

// TestResponseCodecLeavesLargeBuffersUnpooled checks that a large response
// with no large resource (many clusters) is encoded into a buffer of its
// own, not one of gRPC's global pool, which would keep it after the send.
func TestResponseCodecLeavesLargeBuffersUnpooled(t *testing.T) {
	clusters := "type.googleapis.com/envoy.config.cluster.v3.Cluster"
	resp := &discoveryv3.DiscoveryResponse{VersionInfo: "v1", TypeUrl: clusters}
	for proto.Size(resp) <= largestPooledBuffer {
		resp.Resources = append(resp.Resources, &anypb.Any{TypeUrl: clusters, Value: bytes.Repeat([]byte{0x0a, 0x01, 'c'}, 100)})
	}
	data, err := newResponseCodec(nil).Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 1 {
		t.Fatalf("%d buffers, want 1", len(data))
	}
	if _, ok := data[0].(mem.SliceBuffer); !ok {
		t.Errorf("the %d-byte response is in a %T, a pool's buffer", data.Len(), data[0])
	}
	got := &discoveryv3.DiscoveryResponse{}
	if err := proto.Unmarshal(data.Materialize(), got); err != nil || !proto.Equal(got, resp) {
		t.Errorf("decoded %d resources (err %v), want the %d sent", len(got.Resources), err, len(resp.Resources))
	}
}

// holds reports whether one of data's buffers is b itself.
func holds(data mem.BufferSlice, b []byte) bool {
	for _, buf := range data {
		d := buf.ReadOnlyData()
		if len(d) == len(b) && unsafe.SliceData(d) == unsafe.SliceData(b) {
			return true
		}
	}
	return false
}

// protowireField99 is an unknown field: number 99, varint 1.
func protowireField99() []byte { return []byte{0x98, 0x06, 0x01} }

// BenchmarkResponseCodec encodes the SotW response carrying the load
// workload's route configuration (10,000 Ingresses, a quarter annotated),
// as each stream does on each change: with gRPC's codec and with
// responseCodec. B/op is the garbage each send leaves per stream. The
// buffers are not handed back to gRPC's pool: a change that adds a host
// makes the configuration larger than any buffer the pool holds, as every
// change of the load command does.
func BenchmarkResponseCodec(b *testing.B) {
	w := load.Workload{N: 10000, Namespace: "bench", AnnotatedEvery: 4}
	res, err := translate.NewTranslator(translate.Options{HTTPPort: 8080}).Translate(w.State())
	if err != nil {
		b.Fatal(err)
	}
	s := newSnapshotter()
	if _, err := s.build(res.Resources); err != nil {
		b.Fatal(err)
	}
	ts := s.prev[types.Route]
	resp := &discoveryv3.DiscoveryResponse{VersionInfo: ts.version, Resources: ts.anys, TypeUrl: resource.RouteType, Nonce: "1"}
	for name, codec := range map[string]encoding.CodecV2{"grpc": newResponseCodec(nil).CodecV2, "shared": newResponseCodec(nil)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := codec.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

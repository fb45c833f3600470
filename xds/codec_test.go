package xds

import (
	"bytes"
	"testing"
	"unsafe"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
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
	codec := newResponseCodec()
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

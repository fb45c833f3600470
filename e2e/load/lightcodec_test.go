package load

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/google/go-cmp/cmp"
)

// routeAny is a route configuration of many virtual hosts, as an Any.
func routeAny(t *testing.T, name string, hosts int) *anypb.Any {
	t.Helper()
	rc := &routev3.RouteConfiguration{Name: name}
	for i := range hosts {
		rc.VirtualHosts = append(rc.VirtualHosts, &routev3.VirtualHost{Name: name + "-" + string(rune('a'+i%26)), Domains: []string{"example.com"}})
	}
	a, err := anypb.New(rc)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// split encodes m and cuts the encoding into buffers of size bytes, as
// gRPC hands over a message that came in many frames.
func split(t *testing.T, m proto.Message, size int) mem.BufferSlice {
	t.Helper()
	raw, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out mem.BufferSlice
	for len(raw) > 0 {
		n := min(size, len(raw))
		out = append(out, mem.SliceBuffer(raw[:n]))
		raw = raw[n:]
	}
	return out
}

// A delta response is decoded whole but for its resources' Anys, however
// its encoding is cut into buffers.
func TestLightCodecDelta(t *testing.T) {
	sent := &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: "v7",
		TypeUrl:           resource.RouteType,
		Nonce:             "n-3",
		RemovedResources:  []string{"gone-1", "gone-2"},
		ControlPlane:      &corev3.ControlPlane{Identifier: "cp"},
		Resources: []*discoveryv3.Resource{
			{Name: "http", Version: "abc", Resource: routeAny(t, "http", 500), Aliases: []string{"x"}, Ttl: durationpb.New(5)},
			{Name: "https", Version: "def", Resource: routeAny(t, "https", 3)},
		},
	}
	want := proto.Clone(sent).(*discoveryv3.DeltaDiscoveryResponse)
	for _, r := range want.Resources {
		r.Resource = nil
	}
	for _, size := range []int{1, 7, 1 << 10, 1 << 30} {
		got := &discoveryv3.DeltaDiscoveryResponse{}
		if err := NewLightCodec().Unmarshal(split(t, sent, size), got); err != nil {
			t.Fatalf("buffers of %d bytes: %v", size, err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("buffers of %d bytes (-want +got):\n%s", size, diff)
		}
	}
}

// A SotW response keeps its fields but its resources.
func TestLightCodecSotW(t *testing.T) {
	sent := &discoveryv3.DiscoveryResponse{
		VersionInfo: "v9",
		TypeUrl:     resource.RouteType,
		Nonce:       "n-4",
		Resources:   []*anypb.Any{routeAny(t, "http", 500), routeAny(t, "https", 2)},
	}
	want := &discoveryv3.DiscoveryResponse{VersionInfo: "v9", TypeUrl: resource.RouteType, Nonce: "n-4"}
	for _, size := range []int{1, 5, 1 << 30} {
		got := &discoveryv3.DiscoveryResponse{}
		if err := NewLightCodec().Unmarshal(split(t, sent, size), got); err != nil {
			t.Fatalf("buffers of %d bytes: %v", size, err)
		}
		if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
			t.Errorf("buffers of %d bytes (-want +got):\n%s", size, diff)
		}
	}
}

// A truncated response is an error, not a shorter message.
func TestLightCodecTruncated(t *testing.T) {
	raw, err := proto.Marshal(&discoveryv3.DeltaDiscoveryResponse{
		Nonce: "n", Resources: []*discoveryv3.Resource{{Name: "http", Resource: routeAny(t, "http", 50)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(raw) - 1, len(raw) / 2, 3} {
		err := NewLightCodec().Unmarshal(mem.BufferSlice{mem.SliceBuffer(raw[:cut])}, &discoveryv3.DeltaDiscoveryResponse{})
		if err == nil {
			t.Errorf("%d of %d bytes decoded without an error", cut, len(raw))
		}
	}
}

// Anything else is gRPC's codec's.
func TestLightCodecOtherMessages(t *testing.T) {
	sent := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.RouteType, ResourceNamesSubscribe: []string{"http"}}
	got := &discoveryv3.DeltaDiscoveryRequest{}
	if err := NewLightCodec().Unmarshal(split(t, sent, 3), got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(sent, got) {
		t.Errorf("got %v, want %v", got, sent)
	}
}

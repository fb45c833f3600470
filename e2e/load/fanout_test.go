package load

import (
	"fmt"
	"slices"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// A fan-out client with on-demand clusters subscribes to the load
// assignment of each cluster it holds, once however many clusters read it,
// and unsubscribes when the last of them goes.
func TestEDSFollowerFollowsClusters(t *testing.T) {
	f := newEDSFollower(map[string]string{"a-1": "a", "a-2": "a", "b": "b-eds"})
	step := func(sent, removed []string, wantSub, wantUnsub []string) {
		t.Helper()
		resp := &discoveryv3.DeltaDiscoveryResponse{RemovedResources: removed}
		for _, name := range sent {
			resp.Resources = append(resp.Resources, &discoveryv3.Resource{Name: name})
		}
		sub, unsub := f.clusters(resp)
		slices.Sort(sub)
		slices.Sort(unsub)
		if !slices.Equal(sub, wantSub) || !slices.Equal(unsub, wantUnsub) {
			t.Errorf("sent %v, removed %v: subscribe %v, unsubscribe %v; want %v, %v", sent, removed, sub, unsub, wantSub, wantUnsub)
		}
	}
	step([]string{"a-1", "b", "c"}, nil, []string{"a", "b-eds", "c"}, nil)
	step([]string{"a-1", "a-2"}, nil, nil, nil) // a-1 updated, a-2 reads a too
	step(nil, []string{"a-1", "unknown"}, nil, nil)
	step(nil, []string{"a-2", "c"}, nil, []string{"a", "c"})
	step([]string{"a-2"}, nil, []string{"a"}, nil)
}

// Each SotW client names the load assignments in an order of its own,
// the same each time, without writing the list the clients share, and
// keeps it for its next dial.
func TestSotWClientsNameInOrdersOfTheirOwn(t *testing.T) {
	subs := names{routes: []string{"http"}, sotwEndpoints: make([][]byte, 3)}
	for i := range 100 {
		subs.endpoints = append(subs.endpoints, fmt.Sprintf("ns/svc-%02d/80", i))
	}
	shared := slices.Clone(subs.endpoints)
	decoded := func(b []byte) []string {
		t.Helper()
		req := &discoveryv3.DiscoveryRequest{}
		if err := proto.Unmarshal(b, req); err != nil {
			t.Fatal(err)
		}
		return req.ResourceNames
	}
	one, other := subs.endpointsOf(1), subs.endpointsOf(2)
	if !slices.Equal(subs.endpoints, shared) {
		t.Fatal("the shared list was written")
	}
	if again := subs.endpointsOf(1); &again[0] != &one[0] {
		t.Error("client 1's names were made again for its next dial")
	}
	if fresh := (names{endpoints: shared}).endpointsOf(1); !slices.Equal(decoded(fresh), decoded(one)) {
		t.Error("client 1 named them in two orders")
	}
	if slices.Equal(decoded(one), decoded(other)) || slices.Equal(decoded(one), shared) {
		t.Error("client 1's order is client 2's or the shared list's")
	}
	if sorted := slices.Sorted(slices.Values(decoded(other))); !slices.Equal(sorted, shared) {
		t.Error("client 2 does not name each load assignment once")
	}
}

// A SotW client's request, its names kept encoded, is sent as the
// request with those names: the control plane decodes them.
func TestSotWRequestNamesEncodedNames(t *testing.T) {
	names := []string{"ns/b/80", "ns/a/80", "ns/c/8080"}
	sent, err := proto.Marshal(sotwRequest(&corev3.Node{Id: "fanout-1"}, resource.EndpointType, encodeNames(names), "v3", "7"))
	if err != nil {
		t.Fatal(err)
	}
	got := &discoveryv3.DiscoveryRequest{}
	if err := proto.Unmarshal(sent, got); err != nil {
		t.Fatal(err)
	}
	want := &discoveryv3.DiscoveryRequest{Node: &corev3.Node{Id: "fanout-1"}, TypeUrl: resource.EndpointType, ResourceNames: names, VersionInfo: "v3", ResponseNonce: "7"}
	if !proto.Equal(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
	if len(got.ProtoReflect().GetUnknown()) != 0 {
		t.Error("the names decoded as unknown fields")
	}
}

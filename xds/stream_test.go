package xds

import (
	"strings"
	"testing"
	"unsafe"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// TestRequestNamesAreTheSnapshots checks that the names a request
// subscribes to, decoded into strings of their own, are the snapshot's own
// strings once the request callback has seen them (what the server's
// subscription then keeps), SotW and delta, and that a name the snapshot
// lacks is left as it is.
func TestRequestNamesAreTheSnapshots(t *testing.T) {
	s := fixture{listenerPort: 10080, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}.published(t)
	ts := s.cache.types[resource.EndpointType]
	decoded := func() []string { // as gRPC decodes them: strings of their own
		return []string{strings.Clone("b"), strings.Clone("nowhere"), strings.Clone("a")}
	}
	sotw := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: decoded()}
	if err := (callbacks{s}).OnStreamRequest(1, sotw); err != nil {
		t.Fatal(err)
	}
	delta := &discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNamesSubscribe: decoded()}
	if err := (callbacks{s}).OnStreamDeltaRequest(1, delta); err != nil {
		t.Fatal(err)
	}
	for proto, names := range map[string][]string{"sotw": sotw.ResourceNames, "delta": delta.ResourceNamesSubscribe} {
		found := 0
		for _, name := range names {
			j, exists := ts.index.lookup(name)
			if exists {
				found++
			}
			if shared := exists && unsafe.StringData(name) == unsafe.StringData(ts.names[j]); shared != exists {
				t.Errorf("%s: %q is the snapshot's string: %v, want %v", proto, name, shared, exists)
			}
		}
		if found != 2 {
			t.Errorf("%s: %d of the names are the snapshot's load assignments, want a and b", proto, found)
		}
		if names[1] != "nowhere" {
			t.Errorf("%s: the name the snapshot lacks became %q", proto, names[1])
		}
	}
}

package xds

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
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

// TestRequestNamesAreNotWrittenInPlace checks that the request callback
// makes a request's names the snapshot's strings in a list of its own,
// never by writing into the request's: the codec decodes a request naming
// every served load assignment to the content's own list
// (requestnames.go), which the cache's records and other streams read,
// and a request crossing a change names a list that is no longer the
// current one. Writing into it was a data race.
func TestRequestNamesAreNotWrittenInPlace(t *testing.T) {
	s := fixture{listenerPort: 10080, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}.published(t)
	names := []string{strings.Clone("b"), strings.Clone("a"), strings.Clone("nowhere")}
	before := make([]*byte, len(names))
	for i, name := range names {
		before[i] = unsafe.StringData(name)
	}
	req := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: names}
	if err := (callbacks{s}).OnStreamRequest(1, req); err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if unsafe.StringData(name) != before[i] {
			t.Errorf("the request's list was written: %q is another string", name)
		}
	}
	if sameList(req.ResourceNames, names) {
		t.Error("the request still names its own list, not the snapshot's strings")
	}
}

// TestIdleSotWStreamKeepsNoRequestNames checks that a SotW stream waiting
// for the next change keeps nothing of its last request's list of names
// (10,000 load assignments per Envoy at 1,000 Ingresses): neither the
// client registry, which keeps the snapshot's own list for a request
// naming every resource, nor the stored watch, whose request goes without
// its names. The watch still answers the next change.
func TestIdleSotWStreamKeepsNoRequestNames(t *testing.T) {
	f := fixture{listenerPort: 10080, clusters: map[string][]string{}}
	for i := range 64 {
		f.clusters[fmt.Sprintf("c%02d", i)] = []string{fmt.Sprintf("127.0.0.1:%d", 1000+i)}
	}
	s := f.published(t)
	typ := resource.EndpointType
	decoded := func() []string { // every load assignment, as gRPC decodes them, in an order of their own
		var names []string
		for i := range 64 {
			names = append(names, fmt.Sprintf("c%02d", (i*37)%64))
		}
		return names
	}
	cb := callbacks{s}
	key := streamKey{id: 1}
	cb.OnStreamOpen(t.Context(), 1, typ)
	sub := stream.NewSotwSubscription(decoded(), false)
	out := make(chan cache.Response, 1)

	// The first request is answered at once with every load assignment;
	// its acknowledgement is stored until the next change.
	first := &discoveryv3.DiscoveryRequest{TypeUrl: typ, ResourceNames: decoded()}
	if err := cb.OnStreamRequest(1, first); err != nil {
		t.Fatal(err)
	}
	if _, err := s.cache.CreateWatch(first, sub, out); err != nil {
		t.Fatal(err)
	}
	resp := (<-out).(*sotwResponse)
	sub.SetReturnedResources(resp.GetReturnedResources())
	msg, _ := resp.GetDiscoveryResponse()
	msg.Nonce = "1"
	cb.OnStreamResponse(resp.GetContext(), 1, first, msg)

	ack := &discoveryv3.DiscoveryRequest{TypeUrl: typ, VersionInfo: msg.VersionInfo, ResponseNonce: "1", ResourceNames: decoded()}
	names := weak.Make(&ack.ResourceNames[0])
	if err := cb.OnStreamRequest(1, ack); err != nil {
		t.Fatal(err)
	}
	sub.SetResourceSubscription(ack.ResourceNames)
	cancel, err := s.cache.CreateWatch(ack, sub, out)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	select {
	case r := <-out:
		t.Fatalf("the acknowledgement was answered: %v", r)
	default:
	}
	ack = nil
	for range 3 {
		runtime.GC()
	}
	if names.Value() != nil {
		t.Error("the idle stream keeps its last request's list of names")
	}
	s.clients.mu.Lock()
	kept := s.clients.streams[key].types[typ].subscribed
	s.clients.mu.Unlock()
	if want := s.cache.types[typ].names; len(kept) != len(want) || unsafe.SliceData(kept) != unsafe.SliceData(want) {
		t.Errorf("the registry keeps a list of %d names of its own for the stream, want the snapshot's (%d)", len(kept), len(want))
	}

	f.clusters["c07"] = []string{"127.0.0.1:1007", "127.0.0.1:2007"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-out:
		got := r.(*sotwResponse)
		if got.sent.len() != 1 || got.sent.names[0] != "c07" || got.GetRequest().GetTypeUrl() != typ {
			t.Errorf("the change was answered with %v (request %v), want load assignment c07", got.sent.names, got.GetRequest())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the change did not reach the stored watch")
	}
}

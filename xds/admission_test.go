package xds

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
)

// TestSotWAdmission checks the budget's rules: streams are admitted in
// order while they fit, a released place admits the next, a stream
// heavier than the whole budget goes alone, one that gives up waiting
// leaves the line, and a place is given back after admissionHold on the
// admission's clock.
func TestSotWAdmission(t *testing.T) {
	c := newFakeClock()
	a := newSotWAdmission(4*admissionFloor, c)
	isAdmitted := func(tk *admissionTicket) bool {
		select {
		case <-tk.admitted:
			return true
		default:
			return false
		}
	}
	check := func(what string, tk *admissionTicket, admitted bool, used int64, waiting int) {
		t.Helper()
		gotUsed, gotWaiting := a.state()
		if isAdmitted(tk) != admitted || gotUsed != used || gotWaiting != waiting {
			t.Fatalf("%s: admitted %v, %d used, %d waiting; want %v, %d, %d", what, isAdmitted(tk), gotUsed, gotWaiting, admitted, used, waiting)
		}
	}

	first := a.enqueue(2 * admissionFloor)
	check("the first", first, true, 2*admissionFloor, 0)
	second := a.enqueue(1) // a weight under the floor weighs the floor
	check("the second", second, true, 3*admissionFloor, 0)
	third := a.enqueue(2 * admissionFloor)
	check("the third, beyond the budget", third, false, 3*admissionFloor, 1)
	fourth := a.enqueue(1)
	check("the fourth, which would fit but came after the third", fourth, false, 3*admissionFloor, 2)
	fourth.release()
	check("the fourth, given up", fourth, false, 3*admissionFloor, 1)

	second.release()
	check("the third, once the second is released", third, true, 4*admissionFloor, 0)
	second.release()
	check("a second release gives nothing back", third, true, 4*admissionFloor, 0)

	heavy := a.enqueue(100 * admissionFloor)
	check("a stream heavier than the budget", heavy, false, 4*admissionFloor, 1)
	first.release()
	check("it goes alone", heavy, false, 2*admissionFloor, 1)
	third.release()
	check("it is admitted as the budget", heavy, true, 4*admissionFloor, 0)

	after := a.enqueue(1)
	c.Advance(admissionHold - time.Millisecond)
	check("a stream behind it, before admissionHold", after, false, 4*admissionFloor, 1)
	c.Advance(time.Millisecond)
	check("after admissionHold", after, true, admissionFloor, 0)
	heavy.release()
	check("a place given back by the hold, released again", after, true, admissionFloor, 0)
}

// TestSotWStreamsAdmittedWithinBudget checks, over gRPC, that a SotW ADS
// stream beyond the budget is sent nothing until the stream before it has
// answered its first load assignments, that load assignments of a change
// wait likewise to be sent, that a stream whose client never asks for
// load assignments holds its place for admissionHold only, and that a
// stream ending while it waits leaves the line. Delta streams are not
// held back.
func TestSotWStreamsAdmittedWithinBudget(t *testing.T) {
	f := fixture{listenerPort: 10080, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "b": {"127.0.0.1:2"}}}
	ts, s, c := servedWithRoomForOne(t, f)
	conn := ts.dial(t)
	client := discoveryv3.NewAggregatedDiscoveryServiceClient(conn)
	open := func() (discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient, chan *discoveryv3.DiscoveryResponse) {
		str, err := client.StreamAggregatedResources(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		responses := make(chan *discoveryv3.DiscoveryResponse, 16)
		go func() {
			defer close(responses)
			for {
				r, err := str.Recv()
				if err != nil {
					return
				}
				responses <- r
			}
		}()
		return str, responses
	}
	send := func(str discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesClient, req *discoveryv3.DiscoveryRequest) {
		t.Helper()
		if err := str.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	next := func(what string, responses chan *discoveryv3.DiscoveryResponse) *discoveryv3.DiscoveryResponse {
		t.Helper()
		select {
		case r, ok := <-responses:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no response", what)
			return nil
		}
	}
	waiting := func(what string, want int) {
		t.Helper()
		eventually(t, what, func() error {
			if _, n := s.admission.state(); n != want {
				return fmt.Errorf("%d SotW streams waiting, want %d", n, want)
			}
			return nil
		})
	}
	clusters := &discoveryv3.DiscoveryRequest{TypeUrl: resource.ClusterType}

	first, firstResponses := open()
	send(first, clusters)
	if r := next("the first stream's clusters", firstResponses); r.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("the first stream was sent %s", r.GetTypeUrl())
	}
	second, secondResponses := open()
	send(second, clusters)
	waiting("the second stream waiting", 1)
	select {
	case r := <-secondResponses:
		t.Fatalf("a stream beyond the budget was answered: %s", r.GetTypeUrl())
	default:
	}
	if m := ts.scrape(t); !strings.Contains(m, "\ningress_xds_sotw_streams_waiting 1\n") {
		t.Errorf("the metrics do not show one stream waiting:\n%s", m)
	}

	// The first asks for its load assignments: still in its
	// synchronisation; its answer to them lets the second in.
	eds := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", "b"}}
	send(first, eds)
	r := next("the first stream's load assignments", firstResponses)
	if r.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("the first stream was sent %s", r.GetTypeUrl())
	}
	if _, n := s.admission.state(); n != 1 {
		t.Fatal("the second stream was admitted before the first answered its load assignments")
	}
	send(first, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", "b"}, VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()})
	if r := next("the second stream's clusters", secondResponses); r.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("the second stream was sent %s", r.GetTypeUrl())
	}

	// The second never asks for load assignments and holds the budget:
	// an endpoint change waits to be sent to the first, which will answer
	// it naming them all, until admissionHold has passed on the server's
	// clock.
	f.clusters["a"] = []string{"127.0.0.1:3"}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	waiting("the first stream's endpoint change waiting", 1)
	select {
	case r := <-firstResponses:
		t.Fatalf("load assignments were sent beyond the budget: %s", r.GetTypeUrl())
	default:
	}
	c.Advance(admissionHold)
	r = next("the first stream's endpoint change", firstResponses)
	if r.GetTypeUrl() != resource.EndpointType {
		t.Fatalf("the first stream was sent %s", r.GetTypeUrl())
	}
	send(first, &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", "b"}, VersionInfo: r.GetVersionInfo(), ResponseNonce: r.GetNonce()})

	// With the first's answer read, a third stream is admitted at once.
	third, thirdResponses := open()
	send(third, clusters)
	if r := next("the third stream's clusters", thirdResponses); r.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("the third stream was sent %s", r.GetTypeUrl())
	}

	// A stream that ends while waiting leaves the line.
	ctx, cancel := context.WithCancel(t.Context())
	fourth, err := client.StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send(fourth, clusters)
	waiting("the fourth stream waiting", 1)
	cancel()
	waiting("the fourth stream gone from the line", 0)

	// Delta streams do not wait.
	delta, err := client.DeltaAggregatedResources(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := delta.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType}); err != nil {
		t.Fatal(err)
	}
	dr, err := delta.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if dr.GetTypeUrl() != resource.ClusterType {
		t.Fatalf("the delta stream was sent %s", dr.GetTypeUrl())
	}
}

// TestSotWStreamWeight checks that a SotW stream weighs twice the encoded
// names of the load assignments served, and the floor.
func TestSotWStreamWeight(t *testing.T) {
	f := fixture{listenerPort: 10080, clusters: map[string][]string{"a": {"127.0.0.1:1"}, "bb": {"127.0.0.1:2"}}}
	s := f.published(t)
	req := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: []string{"a", "bb"}}
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	typeOnly, err := proto.Marshal(&discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.cache.served.index(resource.EndpointType).encodedSize(), int64(len(b)-len(typeOnly)); got != want {
		t.Errorf("encoded names: %d bytes, want %d", got, want)
	}
	var noIndex *nameIndex
	if noIndex.encodedSize() != 0 {
		t.Error("no names served weigh something")
	}
}

// TestSotWBudgetWithEnvoys checks the budget against real SotW Envoys:
// with room for one stream at a time and a clock that never moves, the
// second Envoy is served only because the first one's answer to its load
// assignments gave the place back, and an endpoint change reaches both
// the same way. Every place is then given back by an answer.
func TestSotWBudgetWithEnvoys(t *testing.T) {
	toolPath(t, "envoy")
	port := freePort(t)
	f := fixture{listenerPort: port, clusters: map[string][]string{"a": {backend(t, "a1")}}}
	ts, s, _ := servedWithRoomForOne(t, f)
	// startEnvoy waits until each is ready: its listeners and clusters
	// came after its place.
	first := startEnvoy(t, ts.addr, "budget-first", false, nil)
	second := startEnvoy(t, ts.addr, "budget-second", false, nil)
	waitSynced(t, ts, first.nodeID)
	waitSynced(t, ts, second.nodeID)
	expectBackend(t, port, "/a", "a1")

	f.clusters["a"] = []string{backend(t, "a2")}
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, ts, first.nodeID)
	waitSynced(t, ts, second.nodeID)
	expectBackend(t, port, "/a", "a2")
	for _, e := range []*envoy{first, second} {
		if n := e.stat("cluster.a.update_success"); n < 2 {
			t.Errorf("envoy %s took %d load assignments of a, want both versions", e.nodeID, n)
		}
	}
	if used, waiting := s.admission.state(); used != 0 || waiting != 0 {
		t.Errorf("after both Envoys answered: %d of the budget held, %d waiting; want none", used, waiting)
	}
}

// servedWithRoomForOne serves f from a server on a clock the test steps,
// whose SotW budget admits one stream at a time.
func servedWithRoomForOne(t *testing.T, f fixture) (*testServer, *Server, *fakeClock) {
	t.Helper()
	s, c := steppedServer()
	s.admission.budget = 1 // every SotW stream alone
	if _, err := s.Publish(t.Context(), f.resources(t)); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, s, lis, &logBuffer{}), s, c
}

package load

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// preEncoded is a message the test server encoded before the test measures
// anything, so that what the process allocates while it is sent is the
// client's.
type preEncoded []byte

// serverCodec is gRPC's proto codec but for preEncoded messages, sent as
// they are.
type serverCodec struct{ encoding.CodecV2 }

func (c serverCodec) Marshal(v any) (mem.BufferSlice, error) {
	if b, ok := v.(preEncoded); ok {
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	return c.CodecV2.Marshal(v)
}

// testADS is an ADS server of gRPC's that sends each of responses in turn,
// waiting for each to be acknowledged by nonce, then ends the call with
// end; the first request it was sent goes to first.
type testADS struct {
	discoveryv3.UnimplementedAggregatedDiscoveryServiceServer
	responses []preEncoded
	nonces    []string
	first     chan proto.Message
	end       error
}

func (a *testADS) StreamAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_StreamAggregatedResourcesServer) error {
	return a.serve(stream, func() (proto.Message, string, error) {
		req, err := stream.Recv()
		return req, req.GetResponseNonce(), err
	})
}

func (a *testADS) DeltaAggregatedResources(stream discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResourcesServer) error {
	return a.serve(stream, func() (proto.Message, string, error) {
		req, err := stream.Recv()
		return req, req.GetResponseNonce(), err
	})
}

func (a *testADS) serve(stream grpc.ServerStream, recv func() (proto.Message, string, error)) error {
	req, _, err := recv()
	if err != nil {
		return err
	}
	a.first <- req
	for i, resp := range a.responses {
		if err := stream.SendMsg(resp); err != nil {
			return err
		}
		for {
			_, nonce, err := recv()
			if err != nil {
				return err
			}
			if nonce == a.nonces[i] {
				break
			}
		}
	}
	return a.end
}

// serveADS starts ads on a gRPC server of its own and returns its address.
func serveADS(t *testing.T, ads *testADS) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodecV2(serverCodec{encoding.GetCodecV2(grpcproto.Name)}))
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(srv, ads)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func encode(t *testing.T, m proto.Message) preEncoded {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bigAny is a route configuration's Any of n bytes, never decoded.
func bigAny(n int) *anypb.Any {
	return &anypb.Any{TypeUrl: resource.RouteType, Value: make([]byte, n)}
}

func recvFirst(ctx context.Context, t *testing.T, ads *testADS) proto.Message {
	t.Helper()
	select {
	case req := <-ads.first:
		return req
	case <-ctx.Done():
		t.Fatal("the server was sent no request")
		return nil
	}
}

// An h2Stream speaks gRPC to gRPC's own server: its request, larger
// than HTTP/2's first window, its names sent from where the client keeps
// them encoded, arrives whole; responses larger than
// Envoy's stream window, in all larger than its connection window,
// arrive (the windows given back as they are read), decoded as
// LightCodec decodes them; and the call's status ends it.
func TestH2StreamSotW(t *testing.T) {
	ads := &testADS{first: make(chan proto.Message, 1), end: status.Error(codes.ResourceExhausted, "enough of this")}
	for i := range 3 {
		nonce := fmt.Sprint(i + 1)
		ads.nonces = append(ads.nonces, nonce)
		ads.responses = append(ads.responses, encode(t, &discoveryv3.DiscoveryResponse{
			VersionInfo: "v" + nonce, TypeUrl: resource.RouteType, Nonce: nonce,
			Resources: []*anypb.Any{bigAny(envoyStreamWindowBytes / 2), bigAny(envoyStreamWindowBytes / 2)},
		}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := dialH2(ctx, serveADS(t, ads), discoveryv3.AggregatedDiscoveryService_StreamAggregatedResources_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	stream := h2SotW{s}

	var names []string
	for i := range 5000 {
		names = append(names, fmt.Sprintf("namespace/service-%05d/8080", i))
	}
	// The names kept encoded, as a SotW fan-out client sends them.
	encoded := encodeNames(names)
	sent := sotwRequest(nil, resource.EndpointType, encoded, "", "")
	if size := proto.Size(sent); size <= h2DefaultWindow {
		t.Fatalf("the request is %d bytes, within HTTP/2's first window", size)
	}
	if err := stream.Send(sent); err != nil {
		t.Fatal(err)
	}
	want := &discoveryv3.DiscoveryRequest{TypeUrl: resource.EndpointType, ResourceNames: names}
	if got := recvFirst(ctx, t, ads); !proto.Equal(got, want) {
		t.Errorf("the server was sent a request of %d names, want %d", len(got.(*discoveryv3.DiscoveryRequest).ResourceNames), len(names))
	}
	if kept := sent.ProtoReflect().GetUnknown(); len(kept) != len(encoded) {
		t.Errorf("the request kept %d bytes of its names after Send, want %d", len(kept), len(encoded))
	}
	for i, nonce := range ads.nonces {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		want := &discoveryv3.DiscoveryResponse{VersionInfo: "v" + nonce, TypeUrl: resource.RouteType, Nonce: nonce}
		if !proto.Equal(resp, want) {
			t.Errorf("response %d decoded as %v, want %v", i, resp, want)
		}
		if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resource.RouteType, VersionInfo: resp.VersionInfo, ResponseNonce: resp.Nonce}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = stream.Recv()
	if err == nil || !strings.Contains(err.Error(), "grpc-status 8") || !strings.Contains(err.Error(), "enough of this") {
		t.Errorf("the call's end: %v, want its status", err)
	}
}

// A delta call: each resource's name and version decoded, its Any not;
// the call ended OK is io.EOF.
func TestH2StreamDelta(t *testing.T) {
	ads := &testADS{first: make(chan proto.Message, 1), nonces: []string{"n1"}}
	ads.responses = []preEncoded{encode(t, &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "n1", RemovedResources: []string{"gone"},
		Resources: []*discoveryv3.Resource{
			{Name: "a", Version: "1", Resource: bigAny(1 << 20)},
			{Name: "b", Version: "2", Resource: bigAny(10)},
		},
	})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := dialH2(ctx, serveADS(t, ads), discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResources_FullMethodName)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	stream := h2Delta{s}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResourceNamesSubscribe: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	recvFirst(ctx, t, ads)
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	want := &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: "v1", TypeUrl: resource.ClusterType, Nonce: "n1", RemovedResources: []string{"gone"},
		Resources: []*discoveryv3.Resource{{Name: "a", Version: "1"}, {Name: "b", Version: "2"}},
	}
	if !proto.Equal(resp, want) {
		t.Errorf("decoded %v, want %v", resp, want)
	}
	if err := stream.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resource.ClusterType, ResponseNonce: "n1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("the call ended OK: %v, want io.EOF", err)
	}
}

// What a client allocates to read one response of 16 MiB: an h2Stream
// reads it a frame at a time, where gRPC's client holds all of it before
// LightCodec sees it. That is why -fanout-h2 exists: 2,000 clients each
// sent the route configuration at once hold it 2,000 times.
func TestH2StreamHoldsAFrameNotAResponse(t *testing.T) {
	const size = 16 << 20
	allocated := func(open func(ctx context.Context, address string) (sotwStream, func())) uint64 {
		ads := &testADS{first: make(chan proto.Message, 1), nonces: []string{"1"}, responses: []preEncoded{encode(t,
			&discoveryv3.DiscoveryResponse{VersionInfo: "v1", TypeUrl: resource.RouteType, Nonce: "1", Resources: []*anypb.Any{bigAny(size)}})}}
		address := serveADS(t, ads)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		stream, done := open(ctx, address)
		defer done()
		if err := stream.Send(&discoveryv3.DiscoveryRequest{TypeUrl: resource.RouteType}); err != nil {
			t.Fatal(err)
		}
		recvFirst(ctx, t, ads)
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	h2 := allocated(func(ctx context.Context, address string) (sotwStream, func()) {
		s, err := dialH2(ctx, address, discoveryv3.AggregatedDiscoveryService_StreamAggregatedResources_FullMethodName)
		if err != nil {
			t.Fatal(err)
		}
		return h2SotW{s}, s.close
	})
	viaGRPC := allocated(func(ctx context.Context, address string) (sotwStream, func()) {
		conn, err := grpc.NewClient(address, LightDialOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).StreamAggregatedResources(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return stream, func() { conn.Close() }
	})
	t.Logf("allocated reading %d MiB: h2Stream %.1f MiB, gRPC's client %.1f MiB", size>>20, float64(h2)/(1<<20), float64(viaGRPC)/(1<<20))
	if h2 > size/8 {
		t.Errorf("an h2Stream allocated %d bytes to read a response of %d", h2, size)
	}
	if viaGRPC < size {
		t.Errorf("gRPC's client allocated %d bytes to read a response of %d: the contrast this test draws is gone", viaGRPC, size)
	}
}

// An h2Stream pings the server as Envoy's bootstrap has Envoy do, every
// 30 s with up to 15% more, whatever it is reading: the control plane
// keeps a connection it reads from.
func TestH2StreamKeepalive(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tick := make(chan time.Time)
	asked := make(chan time.Duration, 4)
	after := func(d time.Duration) <-chan time.Time {
		asked <- d
		return tick
	}
	dialed := make(chan error, 1)
	go func() {
		s, err := openH2(ctx, lis.Addr().String(), discoveryv3.AggregatedDiscoveryService_DeltaAggregatedResources_FullMethodName, after)
		if err == nil {
			defer s.close()
			<-ctx.Done()
		}
		dialed <- err
	}()
	server, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	server.SetDeadline(time.Now().Add(time.Minute))
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(server, preface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(server, server)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	pings := make(chan error, 1)
	go func() {
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				pings <- err
				return
			}
			if p, ok := f.(*http2.PingFrame); ok && !p.IsAck() {
				pings <- nil
			}
		}
	}()
	for range 2 {
		select {
		case d := <-asked:
			if d < envoyKeepalive || d >= envoyKeepalive+envoyKeepaliveJitter {
				t.Errorf("the keepalive waits %v, want %v to %v", d, envoyKeepalive, envoyKeepalive+envoyKeepaliveJitter)
			}
		case err := <-dialed:
			t.Fatalf("dialling: %v", err)
		case <-ctx.Done():
			t.Fatal("the keepalive never waited")
		}
		tick <- time.Now()
		select {
		case err := <-pings:
			if err != nil {
				t.Fatalf("reading the client's frames: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("no PING after the keepalive's wait")
		}
	}
}

package authz

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/utils/clock"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// startConnLimiter serves the limiter over real gRPC on loopback, as Envoy
// calls it.
func startConnLimiter(t *testing.T) (extprocv3.ExternalProcessorClient, *ConnLimiter) {
	t.Helper()
	return startConnLimiterOn(t, clock.RealClock{})
}

// startConnLimiterOn is startConnLimiter with the limiter's clock.
func startConnLimiterOn(t *testing.T, clk clock.Clock) (extprocv3.ExternalProcessorClient, *ConnLimiter) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	l := NewConnLimiter(slog.New(slog.DiscardHandler))
	l.clock = clk
	extprocv3.RegisterExternalProcessorServer(srv, l)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return extprocv3.NewExternalProcessorClient(conn), l
}

// request opens a stream as Envoy's ext_proc filter does for a request
// from addr on a route with md, sends the request's headers, and returns
// the stream and the service's first answer.
func request(t *testing.T, c extprocv3.ExternalProcessorClient, md map[string]string, addr string) (extprocv3.ExternalProcessor_ProcessClient, context.CancelFunc, *extprocv3.ProcessingResponse, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(), metadata.New(md)))
	stream, err := c.Process(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	attrs, _ := structpb.NewStruct(map[string]any{authzapi.AttrSourceAddress: addr})
	if err := stream.Send(&extprocv3.ProcessingRequest{
		Request:    &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{}},
		Attributes: map[string]*structpb.Struct{authzapi.ExtProcAttributes: attrs},
	}); err != nil && !errors.Is(err, io.EOF) {
		// EOF: the service ended the stream already (Recv says why).
		cancel()
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	return stream, cancel, resp, err
}

// waitCount waits for the limiter's count of addr in zone to be n: a
// stream's end reaches the service after the client has closed it.
func waitCount(t *testing.T, l *ConnLimiter, zone, addr string, n uint32) {
	t.Helper()
	a := netip.MustParseAddr(addr)
	for deadline := time.Now().Add(10 * time.Second); l.InFlight(zone, a) != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%s in %s: %d in flight, want %d", addr, zone, l.InFlight(zone, a), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestConnLimiter(t *testing.T) {
	c, l := startConnLimiter(t)
	md := map[string]string{authzapi.ConnMax: "2", authzapi.ConnZone: "default/pooled", authzapi.ConnStatus: "503", authzapi.ConnExempt: "10.9.0.0/16,2001:db8::/32"}
	const client = "10.0.0.1:40000"

	// Two in flight are let on; the third is answered 503, uncounted.
	var open []context.CancelFunc
	for i := range 2 {
		_, cancel, resp, err := request(t, c, md, client)
		if err != nil || resp.GetRequestHeaders() == nil {
			t.Fatalf("request %d: %v, %v; want to go on", i, resp, err)
		}
		open = append(open, cancel)
	}
	_, cancel, resp, err := request(t, c, md, client)
	if err != nil || resp.GetImmediateResponse().GetStatus().GetCode() != 503 {
		t.Fatalf("third request: %v, %v; want 503", resp, err)
	}
	cancel()
	waitCount(t, l, "default/pooled", "10.0.0.1", 2)

	// Another address, another zone, an exempt address: each its own.
	for _, tc := range []struct {
		md   map[string]string
		addr string
	}{
		{md, "10.0.0.2:1"},
		{map[string]string{authzapi.ConnMax: "2", authzapi.ConnZone: "default/other", authzapi.ConnStatus: "429"}, client},
		{md, "10.9.1.1:1"},
		{md, "[2001:db8::7]:1"},
	} {
		s, cancel, resp, err := request(t, c, tc.md, tc.addr)
		if err != nil || resp.GetRequestHeaders() == nil {
			t.Errorf("from %s in %s: %v, %v; want to go on", tc.addr, tc.md[authzapi.ConnZone], resp, err)
		}
		s.CloseSend()
		defer cancel()
	}

	// A stream that ends (the response's end, or a reset) gives its
	// place back.
	open[0]()
	waitCount(t, l, "default/pooled", "10.0.0.1", 1)
	if _, cancel, resp, err := request(t, c, md, client); err != nil || resp.GetRequestHeaders() == nil {
		t.Errorf("after one ended: %v, %v; want to go on", resp, err)
	} else {
		defer cancel()
	}
	open[1]()
	// The exempt were never counted.
	if n := l.InFlight("default/pooled", netip.MustParseAddr("10.9.1.1")); n != 0 {
		t.Errorf("exempt client counted: %d", n)
	}
}

// The response's trailers are answered, and the stream's end after them
// gives the place back: the way Envoy ends a request that was answered.
func TestConnLimiterTrailersThenEnd(t *testing.T) {
	c, l := startConnLimiter(t)
	md := map[string]string{authzapi.ConnMax: "1", authzapi.ConnZone: "z", authzapi.ConnStatus: "503"}
	s, cancel, resp, err := request(t, c, md, "192.0.2.1:5")
	defer cancel()
	if err != nil || resp.GetRequestHeaders() == nil {
		t.Fatalf("%v, %v", resp, err)
	}
	if err := s.Send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseTrailers{ResponseTrailers: &extprocv3.HttpTrailers{}}}); err != nil {
		t.Fatal(err)
	}
	if resp, err := s.Recv(); err != nil || resp.GetResponseTrailers() == nil {
		t.Fatalf("trailers: %v, %v", resp, err)
	}
	waitCount(t, l, "z", "192.0.2.1", 1)
	s.CloseSend()
	waitCount(t, l, "z", "192.0.2.1", 0)
}

// A route whose metadata is unusable, or a request without an address, is
// refused with an error (Envoy's status_on_error), never let on.
func TestConnLimiterRefusesBadRoutes(t *testing.T) {
	c, _ := startConnLimiter(t)
	good := map[string]string{authzapi.ConnMax: "1", authzapi.ConnZone: "z", authzapi.ConnStatus: "503"}
	for name, tc := range map[string]struct {
		md   map[string]string
		addr string
	}{
		"no max":      {map[string]string{authzapi.ConnZone: "z", authzapi.ConnStatus: "503"}, "192.0.2.1:1"},
		"max 0":       {map[string]string{authzapi.ConnMax: "0", authzapi.ConnZone: "z", authzapi.ConnStatus: "503"}, "192.0.2.1:1"},
		"no zone":     {map[string]string{authzapi.ConnMax: "1", authzapi.ConnStatus: "503"}, "192.0.2.1:1"},
		"status 200":  {map[string]string{authzapi.ConnMax: "1", authzapi.ConnZone: "z", authzapi.ConnStatus: "200"}, "192.0.2.1:1"},
		"bad exempt":  {map[string]string{authzapi.ConnMax: "1", authzapi.ConnZone: "z", authzapi.ConnStatus: "503", authzapi.ConnExempt: "10.0.0.0/33"}, "192.0.2.1:1"},
		"no address":  {good, ""},
		"bad address": {good, "somewhere"},
	} {
		_, cancel, resp, err := request(t, c, tc.md, tc.addr)
		if grpcstatus.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, %v; want InvalidArgument", name, resp, err)
		}
		cancel()
	}
}

package authz

import (
	"bytes"
	"context"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// A paced stream answers each body chunk no sooner than nginx's
// limit_rate would have sent its last byte: rate*(t+1) + after.
func TestPace(t *testing.T) {
	c, l := startConnLimiter(t)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(), metadata.New(map[string]string{
		authzapi.PaceRate: "1000", authzapi.PaceAfter: "500",
	})))
	defer cancel()
	start := time.Now()
	s, err := c.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(req *extprocv3.ProcessingRequest) *extprocv3.ProcessingResponse {
		t.Helper()
		if err := s.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{}}}); r.GetRequestHeaders() == nil {
		t.Fatalf("request headers: %v", r)
	}
	chunk := func(n int) *extprocv3.ProcessingRequest {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{ResponseBody: &extprocv3.HttpBody{Body: bytes.Repeat([]byte("x"), n)}}}
	}
	// The 500 at full speed and the first second's 1,000: at once.
	for _, n := range []int{500, 1000} {
		if r := send(chunk(n)); r.GetResponseBody() == nil {
			t.Fatalf("chunk of %d: %v", n, r)
		}
	}
	// 1,500 more: 3,000 in all, due 1.5 s after the start.
	if r := send(chunk(1500)); r.GetResponseBody() == nil {
		t.Fatalf("third chunk: %v", r)
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("3,000 bytes at 1,000/s after 500: answered after %s, want 1.5 s at least", took)
	}
	// Paced streams are not counted as connections.
	if len(l.inFlight) != 0 {
		t.Errorf("counted: %v", l.inFlight)
	}
}

func TestPaceRefusesBadRoutes(t *testing.T) {
	c, _ := startConnLimiter(t)
	for name, md := range map[string]map[string]string{
		"rate 0":    {authzapi.PaceRate: "0"},
		"rate text": {authzapi.PaceRate: "fast"},
		"bad after": {authzapi.PaceRate: "10", authzapi.PaceAfter: "-1"},
	} {
		_, cancel, resp, err := request(t, c, md, "192.0.2.1:1")
		if grpcstatus.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, %v; want InvalidArgument", name, resp, err)
		}
		cancel()
	}
}

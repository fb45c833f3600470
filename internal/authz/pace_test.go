package authz

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// A paced stream answers each body chunk no sooner than nginx's
// limit_rate would have sent its last byte: rate*(t+1) + after. Time is a
// fake clock the test steps to a nanosecond before each chunk's due time,
// where the chunk must still wait, and to it, where it must be answered.
func TestPace(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := clk.Now()
	c, l := startConnLimiterOn(t, clk)
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(context.Background(), metadata.New(map[string]string{
		authzapi.PaceRate: "1000", authzapi.PaceAfter: "500",
	})))
	defer cancel()
	s, err := c.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan *extprocv3.ProcessingResponse, 1)
	go func() {
		defer close(answers)
		for {
			resp, err := s.Recv()
			if err != nil {
				return
			}
			answers <- resp
		}
	}()
	answer := func(what string) *extprocv3.ProcessingResponse {
		t.Helper()
		select {
		case r, ok := <-answers:
			if !ok {
				t.Fatalf("%s: the stream ended", what)
			}
			return r
		case <-time.After(10 * time.Second): // a hang, not a timing criterion
			t.Fatalf("%s: no answer", what)
		}
		return nil
	}
	send := func(req *extprocv3.ProcessingRequest) {
		t.Helper()
		if err := s.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	send(&extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_RequestHeaders{RequestHeaders: &extprocv3.HttpHeaders{}}})
	if r := answer("request headers"); r.GetRequestHeaders() == nil {
		t.Fatalf("request headers: %v", r)
	}
	chunk := func(n int) *extprocv3.ProcessingRequest {
		return &extprocv3.ProcessingRequest{Request: &extprocv3.ProcessingRequest_ResponseBody{ResponseBody: &extprocv3.HttpBody{Body: bytes.Repeat([]byte("x"), n)}}}
	}
	// The 500 at full speed and the first second's 1,000: at once, the
	// clock not moving.
	for _, n := range []int{500, 1000} {
		send(chunk(n))
		if r := answer(fmt.Sprintf("chunk of %d", n)); r.GetResponseBody() == nil {
			t.Fatalf("chunk of %d: %v", n, r)
		}
	}
	// 1,500 more: 3,000 in all, due 1.5 s after the start.
	send(chunk(1500))
	due := start.Add(1500 * time.Millisecond)
	waitUntil(t, "the third chunk waiting on the clock", func() bool { return clk.HasWaiters() })
	clk.SetTime(due.Add(-time.Nanosecond))
	select {
	case r := <-answers:
		t.Fatalf("3,000 bytes at 1,000/s after 500: answered a nanosecond before 1.5 s: %v", r)
	default:
	}
	if !clk.HasWaiters() {
		t.Fatal("the third chunk stopped waiting a nanosecond before 1.5 s")
	}
	clk.SetTime(due)
	if r := answer("third chunk"); r.GetResponseBody() == nil {
		t.Fatalf("third chunk: %v", r)
	}
	// Paced streams are not counted as connections.
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.inFlight) != 0 {
		t.Errorf("counted: %v", l.inFlight)
	}
}

// waitUntil polls cond: for a goroutine to get somewhere, never for time
// to pass.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10 s", what)
		}
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

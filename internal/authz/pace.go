package authz

import (
	"context"
	"strconv"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// pace serves the stream of a request whose response is paced as nginx's
// limit_rate with limit_rate_after paces it (ngx_http_write_filter: a
// response may have sent, at t seconds after the request began,
// rate*(t+1) + after bytes): Envoy streams the response's body to the
// service a chunk at a time and forwards a chunk only once the service has
// answered it, so the service answers each chunk when the bytes up to its
// end are within the allowance. A chunk waits whole (nginx would send the
// part within the allowance): the response is never faster than nginx's.
// Envoy holds back reading from the backend while it waits, as nginx
// does. Time is clk's (a test steps a fake one).
func pace(stream extprocv3.ExternalProcessor_ProcessServer, rate, after uint64, clk clock.Clock) error {
	ctx := stream.Context()
	start := clk.Now()
	var sent uint64
	for {
		msg, err := stream.Recv()
		if err != nil {
			return ignoreEnd(err)
		}
		if b := msg.GetResponseBody(); b != nil {
			sent += uint64(len(b.GetBody()))
			if sent > after {
				// The time at which rate*(t+1) reaches sent-after.
				due := start.Add(time.Duration(float64(sent-after)/float64(rate)*float64(time.Second)) - time.Second)
				if wait := due.Sub(clk.Now()); wait > 0 && !sleepCtx(ctx, clk, wait) {
					return nil // the request went
				}
			}
		}
		if err := stream.Send(continueResponse(msg)); err != nil {
			return err
		}
	}
}

// readPace reads a paced route's rate and amount at full speed; ok is
// false when the stream is not a paced route's.
func readPace(ctx context.Context) (rate, after uint64, ok bool, err error) {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get(authzapi.PaceRate)
	if len(v) == 0 {
		return 0, 0, false, nil
	}
	rate, err = strconv.ParseUint(v[0], 10, 64)
	if err != nil || rate == 0 || len(v) != 1 {
		return 0, 0, true, grpcstatus.Errorf(codes.InvalidArgument, "%s %q: not a number from 1", authzapi.PaceRate, v)
	}
	if a := md.Get(authzapi.PaceAfter); len(a) > 0 {
		after, err = strconv.ParseUint(a[0], 10, 64)
		if err != nil || len(a) != 1 {
			return 0, 0, true, grpcstatus.Errorf(codes.InvalidArgument, "%s %q: not a number", authzapi.PaceAfter, a)
		}
	}
	return rate, after, true, nil
}

// sleepCtx waits for d on clk, or until ctx ends (false).
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}

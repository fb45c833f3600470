package authz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"sync"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
	"k8s.io/utils/clock"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// ConnLimiter is the connection limit (limit-connections): an ext_proc
// server that counts, per zone and client address, the requests in
// flight, as nginx's limit_conn counts a client's requests being
// processed. Envoy opens a stream for each request of a route with the
// limit, and keeps it until the response's end (its trailers, which the
// route asks Envoy to send, empty when the response has none), or until
// the request is reset (the client gone): the request holds its place in
// the count exactly while its stream is open. A request that would take
// the count past the limit is answered with the route's status and never
// counted, as nginx counts only the requests it lets through.
//
// Nothing here is configuration of its own: the limit, the zone, the
// exempt ranges and the status come with each stream (authzapi), so that
// the count of an Ingress changed in the control plane follows at once.
type ConnLimiter struct {
	extprocv3.UnimplementedExternalProcessorServer
	log *slog.Logger
	// clock paces responses (pace.go); tests step a fake one.
	clock clock.Clock

	mu       sync.Mutex
	inFlight map[connKey]uint32 // no entry at zero
}

// connKey is one client's count in one zone.
type connKey struct {
	zone string
	addr netip.Addr
}

// NewConnLimiter returns a limiter with no request in flight.
func NewConnLimiter(log *slog.Logger) *ConnLimiter {
	return &ConnLimiter{log: log, clock: clock.RealClock{}, inFlight: map[connKey]uint32{}}
}

// connRoute is what a stream's metadata says of its route.
type connRoute struct {
	max    uint32
	zone   string
	exempt []netip.Prefix
	status uint32
}

// Process serves one request's stream.
func (l *ConnLimiter) Process(stream extprocv3.ExternalProcessor_ProcessServer) error {
	ctx := stream.Context()
	// A paced route's stream (limit-rate-after: pace.go) is not counted:
	// its route's own connection limit has a stream of its own.
	if rate, after, ok, err := readPace(ctx); ok {
		if err != nil {
			l.log.ErrorContext(ctx, "paced stream without a usable route: refused", "error", err)
			return err
		}
		return pace(stream, rate, after, l.clock)
	}
	route, err := readConnRoute(ctx)
	if err != nil {
		// A control-plane bug: Envoy answers its status_on_error (the
		// refusal), never the backend.
		l.log.ErrorContext(ctx, "connection limit stream without a usable route: refused", "error", err)
		return grpcstatus.Error(codes.InvalidArgument, err.Error())
	}
	first, err := stream.Recv()
	if err != nil {
		return ignoreEnd(err)
	}
	if first.GetRequestHeaders() == nil {
		return grpcstatus.Errorf(codes.InvalidArgument, "first message %T, want the request headers", first.GetRequest())
	}
	addr, err := sourceAddress(first)
	if err != nil {
		l.log.ErrorContext(ctx, "connection limit request without a client address: refused", "error", err)
		return grpcstatus.Error(codes.InvalidArgument, err.Error())
	}
	key := connKey{zone: route.zone, addr: addr}
	if !exempt(route.exempt, addr) {
		if !l.acquire(key, route.max) {
			return stream.Send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ImmediateResponse{
				ImmediateResponse: &extprocv3.ImmediateResponse{Status: &typev3.HttpStatus{Code: typev3.StatusCode(route.status)}},
			}})
		}
		defer l.release(key)
	}
	if err := stream.Send(&extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{
		RequestHeaders: &extprocv3.HeadersResponse{},
	}}); err != nil {
		return err
	}
	// Until the stream ends: answer what Envoy sends (the response's
	// trailers, and any other phase, unchanged).
	for {
		msg, err := stream.Recv()
		if err != nil {
			return ignoreEnd(err)
		}
		if err := stream.Send(continueResponse(msg)); err != nil {
			return err
		}
	}
}

// InFlight is the count of one client in one zone, for tests.
func (l *ConnLimiter) InFlight(zone string, addr netip.Addr) uint32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight[connKey{zone, addr}]
}

// acquire counts a request in, unless the client has max in flight.
func (l *ConnLimiter) acquire(k connKey, max uint32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[k] >= max {
		return false
	}
	l.inFlight[k]++
	return true
}

// release counts a request out.
func (l *ConnLimiter) release(k connKey) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.inFlight[k]; n > 1 {
		l.inFlight[k] = n - 1
	} else {
		delete(l.inFlight, k)
	}
}

// continueResponse lets the phase msg is of go on unchanged.
func continueResponse(msg *extprocv3.ProcessingRequest) *extprocv3.ProcessingResponse {
	switch msg.GetRequest().(type) {
	case *extprocv3.ProcessingRequest_RequestHeaders:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestHeaders{RequestHeaders: &extprocv3.HeadersResponse{}}}
	case *extprocv3.ProcessingRequest_ResponseHeaders:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseHeaders{ResponseHeaders: &extprocv3.HeadersResponse{}}}
	case *extprocv3.ProcessingRequest_RequestBody:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestBody{RequestBody: &extprocv3.BodyResponse{}}}
	case *extprocv3.ProcessingRequest_ResponseBody:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseBody{ResponseBody: &extprocv3.BodyResponse{}}}
	case *extprocv3.ProcessingRequest_RequestTrailers:
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_RequestTrailers{RequestTrailers: &extprocv3.TrailersResponse{}}}
	default: // the response's trailers
		return &extprocv3.ProcessingResponse{Response: &extprocv3.ProcessingResponse_ResponseTrailers{ResponseTrailers: &extprocv3.TrailersResponse{}}}
	}
}

// ignoreEnd is nil for the ends of a stream that are no failure: Envoy
// closing it after the response, or resetting it when the client went.
func ignoreEnd(err error) error {
	if errors.Is(err, io.EOF) || grpcstatus.Code(err) == codes.Canceled {
		return nil
	}
	return err
}

// readConnRoute reads the route's limit from the stream's metadata.
func readConnRoute(ctx context.Context) (connRoute, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	one := func(key string) string {
		if v := md.Get(key); len(v) == 1 {
			return v[0]
		}
		return ""
	}
	var r connRoute
	max, err := strconv.ParseUint(one(authzapi.ConnMax), 10, 32)
	if err != nil || max == 0 {
		return r, fmt.Errorf("%s %q: not a number from 1", authzapi.ConnMax, one(authzapi.ConnMax))
	}
	status, err := strconv.ParseUint(one(authzapi.ConnStatus), 10, 32)
	if err != nil || status < 400 || status > 599 {
		return r, fmt.Errorf("%s %q: not a status from 400 to 599", authzapi.ConnStatus, one(authzapi.ConnStatus))
	}
	r.max, r.status, r.zone = uint32(max), uint32(status), one(authzapi.ConnZone)
	if r.zone == "" {
		return r, fmt.Errorf("no %s", authzapi.ConnZone)
	}
	if v := one(authzapi.ConnExempt); v != "" {
		for c := range strings.SplitSeq(v, ",") {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return r, fmt.Errorf("%s: %w", authzapi.ConnExempt, err)
			}
			r.exempt = append(r.exempt, p)
		}
	}
	return r, nil
}

// sourceAddress is the client's address of the stream's first message.
func sourceAddress(msg *extprocv3.ProcessingRequest) (netip.Addr, error) {
	v := msg.GetAttributes()[authzapi.ExtProcAttributes].GetFields()[authzapi.AttrSourceAddress].GetStringValue()
	ap, err := netip.ParseAddrPort(v)
	if err != nil {
		// An address without a port (a pipe has none) is still one.
		a, err2 := netip.ParseAddr(v)
		if err2 != nil {
			return netip.Addr{}, fmt.Errorf("attribute %s %q: %w", authzapi.AttrSourceAddress, v, err)
		}
		return a.Unmap(), nil
	}
	return ap.Addr().Unmap(), nil
}

// exempt reports whether addr is in one of the ranges.
func exempt(ranges []netip.Prefix, addr netip.Addr) bool {
	for _, p := range ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

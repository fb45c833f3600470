package envoy

import (
	"strconv"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A route's connection limit (ir.ConnectionLimit, limit-connections) is
// counted by the authorisation service beside each Envoy
// (internal/authz/connlimit.go), which Envoy's ext_proc filter calls over
// gRPC on loopback: Envoy has no count of requests in flight per client
// address (its circuit breakers count a cluster's, from all clients; its
// connection limits count connections, not requests). The filter opens one
// stream per request of such a route, sends the request's headers with
// the client's address (the source.address attribute: the peer, or the
// trusted X-Forwarded-For hop, as RBAC's remote_ip), and keeps the stream
// until the response's end, by asking for the response's trailers (Envoy
// sends empty ones when the response has none) or until the request is
// reset: the service counts a client's open streams. The route's limit
// travels as the stream's gRPC metadata (authzapi), so the service needs
// nothing from the control plane. Only the request's headers and the
// response's end cross to the service, never a body.
const connLimitFilter = "envoy.filters.http.ext_proc"

// connLimitTimeout bounds each of the service's answers, which are an
// in-memory count on loopback.
const connLimitTimeout = 5 * time.Second

// connLimitListenerConfig is the filter's listener-wide entry, disabled
// (httpFilter.disabled): only the routes with a limit open a stream. It
// fails closed: when the service cannot be asked (down, or past the
// timeout), the client gets 503, as from a limit, never the backend.
func connLimitListenerConfig() proto.Message {
	return &extprocv3.ExternalProcessor{
		GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: AuthzCluster}},
		},
		FailureModeAllow: false,
		StatusOnError:    &typev3.HttpStatus{Code: typev3.StatusCode_ServiceUnavailable},
		ProcessingMode: &extprocv3.ProcessingMode{
			RequestHeaderMode:   extprocv3.ProcessingMode_SEND,
			ResponseHeaderMode:  extprocv3.ProcessingMode_SKIP,
			RequestTrailerMode:  extprocv3.ProcessingMode_SKIP,
			ResponseTrailerMode: extprocv3.ProcessingMode_SEND,
		},
		RequestAttributes: []string{authzapi.AttrSourceAddress},
		MessageTimeout:    durationpb.New(connLimitTimeout),
		// The service changes nothing of the request: it lets it on or
		// answers it.
		DisableClearRouteCache: true,
	}
}

// connLimit is a route's configuration of the filter: its limit, as the
// stream's metadata.
func connLimit(c *ir.ConnectionLimit) *extprocv3.ExtProcPerRoute {
	md := []*corev3.HeaderValue{
		{Key: authzapi.ConnMax, Value: strconv.FormatUint(uint64(c.Max), 10)},
		{Key: authzapi.ConnZone, Value: c.Zone},
		{Key: authzapi.ConnStatus, Value: strconv.FormatUint(uint64(c.Status), 10)},
	}
	if len(c.Exempt) > 0 {
		md = append(md, &corev3.HeaderValue{Key: authzapi.ConnExempt, Value: strings.Join(c.Exempt, ",")})
	}
	return &extprocv3.ExtProcPerRoute{Override: &extprocv3.ExtProcPerRoute_Overrides{
		Overrides: &extprocv3.ExtProcOverrides{GrpcInitialMetadata: md},
	}}
}

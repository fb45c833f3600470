package envoy

import (
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_proc/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A response rate with an amount at full speed first (limit-rate with
// limit-rate-after) cannot be Envoy's fault filter (responserate.go),
// which paces from the first byte. It is paced by the authorisation
// service instead (internal/authz/pace.go), over an ext_proc filter
// instance of its own that streams the response's body to the service a
// chunk at a time: Envoy forwards each chunk once the service has answered
// it, and the service answers when nginx's limit_rate would have sent it.
// This puts the service on the response path of those routes only; the
// connection limit's ext_proc filter (connlimit.go) is another instance,
// which never sees a body.
const responsePaceFilter = "ingress-xds.response-pace"

// responsePaceTimeout bounds the service's answer to one chunk, which
// waits for as long as the pace asks (a chunk of 64 KiB at 1 KiB/s: a
// minute), and so is Envoy's default stream idle timeout: a chunk that
// would wait longer is a response that idle timeout would end anyway.
const responsePaceTimeout = 5 * time.Minute

// responsePaceListenerConfig is the filter's listener-wide entry,
// disabled: only the routes paced this way open a stream. It fails
// closed: when the service cannot be asked, the request gets 503, never
// an unpaced response (a stream broken mid-response ends the response).
func responsePaceListenerConfig() proto.Message {
	return &extprocv3.ExternalProcessor{
		GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: AuthzCluster}},
		},
		FailureModeAllow: false,
		StatusOnError:    &typev3.HttpStatus{Code: typev3.StatusCode_ServiceUnavailable},
		ProcessingMode: &extprocv3.ProcessingMode{
			RequestHeaderMode:   extprocv3.ProcessingMode_SEND, // the pace's start
			ResponseHeaderMode:  extprocv3.ProcessingMode_SKIP,
			ResponseBodyMode:    extprocv3.ProcessingMode_STREAMED,
			RequestTrailerMode:  extprocv3.ProcessingMode_SKIP,
			ResponseTrailerMode: extprocv3.ProcessingMode_SKIP,
		},
		MessageTimeout:         durationpb.New(responsePaceTimeout),
		DisableClearRouteCache: true,
	}
}

// responsePace is a paced route's configuration of the filter: the rate
// and the amount at full speed, in bytes, as the stream's metadata.
func responsePace(r *ir.ResponseRate) *extprocv3.ExtProcPerRoute {
	return &extprocv3.ExtProcPerRoute{Override: &extprocv3.ExtProcPerRoute_Overrides{
		Overrides: &extprocv3.ExtProcOverrides{GrpcInitialMetadata: []*corev3.HeaderValue{
			{Key: authzapi.PaceRate, Value: strconv.FormatUint(r.KiBPerSecond*1024, 10)},
			{Key: authzapi.PaceAfter, Value: strconv.FormatUint(r.AfterKiB*1024, 10)},
		}},
	}}
}

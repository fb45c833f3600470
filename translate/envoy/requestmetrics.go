package envoy

import (
	"fmt"

	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	grpcaccesslogv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/grpc/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	metadatav3 "github.com/envoyproxy/go-control-plane/envoy/type/metadata/v3"
	tracingv3 "github.com/envoyproxy/go-control-plane/envoy/type/tracing/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The request metrics (ir.Listener.RequestMetrics): every request's
// entry goes over Envoy's gRPC access log service to the authorisation
// service beside Envoy (its cluster, AuthzCluster), which counts it as
// ingress-nginx's request metrics. The route's names ride along as the
// entry's custom tags, read from the route metadata applyRouteLog writes
// (accesslog.go), under authzapi's names. Envoy batches the entries (up
// to its buffer_flush_interval, a second), so the count of a request
// shows a moment after it. One more tag, of a substitution format, says
// when the upstream connection was made and how long it took
// (authzapi.MetricsUpstreamConnectFormat), for $upstream_connect_time.

// requestMetricsTags are the custom tags: authzapi's name, and the route
// metadata key it is read from.
var requestMetricsTags = []struct{ tag, key string }{
	{authzapi.MetricsNamespace, ir.MetaNamespace},
	{authzapi.MetricsIngress, ir.MetaIngress},
	{authzapi.MetricsService, ir.MetaService},
	{authzapi.MetricsPath, ir.MetaPath},
	{authzapi.MetricsCanaryCluster, ir.MetaCanaryCluster},
	{authzapi.MetricsCanaryUpstream, ir.MetaCanaryUpstream},
}

// applyRequestMetrics adds the gRPC access log of the request metrics to
// a listener's connection manager when the listener asks for it.
func applyRequestMetrics(hcm *hcmv3.HttpConnectionManager, l *ir.Listener) error {
	if !l.RequestMetrics {
		return nil
	}
	tags := make([]*tracingv3.CustomTag, 0, len(requestMetricsTags)+1)
	for _, t := range requestMetricsTags {
		tags = append(tags, &tracingv3.CustomTag{Tag: t.tag, Type: &tracingv3.CustomTag_Metadata_{Metadata: &tracingv3.CustomTag_Metadata{
			Kind:        &metadatav3.MetadataKind{Kind: &metadatav3.MetadataKind_Route_{Route: &metadatav3.MetadataKind_Route{}}},
			MetadataKey: &metadatav3.MetadataKey{Key: ir.RouteMetadata, Path: []*metadatav3.MetadataKey_PathSegment{{Segment: &metadatav3.MetadataKey_PathSegment_Key{Key: t.key}}}},
		}}})
	}
	tags = append(tags, &tracingv3.CustomTag{Tag: authzapi.MetricsUpstreamConnect, Type: &tracingv3.CustomTag_Value{Value: authzapi.MetricsUpstreamConnectFormat}})
	cfg, err := anypb.New(&grpcaccesslogv3.HttpGrpcAccessLogConfig{CommonConfig: &grpcaccesslogv3.CommonGrpcAccessLogConfig{
		LogName:             authzapi.MetricsLogName,
		TransportApiVersion: corev3.ApiVersion_V3,
		GrpcService:         &corev3.GrpcService{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: AuthzCluster}}},
		CustomTags:          tags,
	}})
	if err != nil {
		return fmt.Errorf("packing the request metrics' access log: %w", err)
	}
	hcm.AccessLog = append(hcm.AccessLog, &accesslogv3.AccessLog{Name: "envoy.access_loggers.http_grpc", ConfigType: &accesslogv3.AccessLog_TypedConfig{TypedConfig: cfg}})
	return nil
}

// anyRequestMetrics says whether some listener sends the request metrics
// (to the authorisation service's cluster).
func anyRequestMetrics(m *ir.IR) bool {
	for _, l := range m.Listeners {
		if l.RequestMetrics {
			return true
		}
	}
	return false
}

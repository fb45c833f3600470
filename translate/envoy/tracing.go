package envoy

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	mutationrulesv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tracev3 "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	earlymutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/early_header_mutation/header_mutation/v3"
	uuidv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/request_id/uuid/v3"
	samplersv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/tracers/opentelemetry/samplers/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// OTLPCluster is the cluster of the OpenTelemetry collector, sent over CDS
// while some route is traced.
const OTLPCluster = "ingress-xds-otlp"

// Tracing: the connection manager has Envoy's OpenTelemetry tracer but
// samples nothing itself (0% at every level); a traced route
// (enable-opentelemetry) samples all its requests, its span named by its
// decorator, and the tracer's sampler (otel-sampler, parent-based) has
// the last word. So a route that is not traced pays nothing, and a
// client's x-client-trace-id or sampled traceparent cannot make it traced.

// applyTracing gives a listener's connection manager the tracer, when
// some route it serves is traced; with an untrusted client, its trace
// context is dropped before the span starts.
func applyTracing(hcm *hcmv3.HttpConnectionManager, l *ir.Listener, uses filterSet) error {
	t := l.Tracing
	if t == nil || uses&useTracing == 0 {
		return nil
	}
	otel := &tracev3.OpenTelemetryConfig{
		GrpcService: &corev3.GrpcService{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: OTLPCluster}}},
		ServiceName: t.ServiceName,
	}
	sampler, err := tracingSampler(t)
	if err != nil {
		return err
	}
	otel.Sampler = sampler
	cfg, err := anypb.New(otel)
	if err != nil {
		return fmt.Errorf("packing the OpenTelemetry tracer: %w", err)
	}
	none := &typev3.Percent{Value: 0}
	hcm.Tracing = &hcmv3.HttpConnectionManager_Tracing{
		ClientSampling: none, RandomSampling: none, OverallSampling: none,
		Provider: &tracev3.Tracing_Http{Name: "envoy.tracers.opentelemetry", ConfigType: &tracev3.Tracing_Http_TypedConfig{TypedConfig: cfg}},
	}
	// Envoy would write its sampling decision into the request's
	// X-Request-ID (a UUID's version digit), changing the client's own:
	// the decision stays in the stream instead, and the ID reaches the
	// backend and the access log as sent, as ingress-nginx's $req_id.
	rid, err := anypb.New(&uuidv3.UuidRequestIdConfig{PackTraceReason: wrapperspb.Bool(false)})
	if err != nil {
		return fmt.Errorf("packing the request ID extension: %w", err)
	}
	hcm.RequestIdExtension = &hcmv3.RequestIDExtension{TypedConfig: rid}
	if t.Untrusted {
		var mutations []*mutationrulesv3.HeaderMutation
		for _, h := range []string{"traceparent", "tracestate"} {
			mutations = append(mutations, &mutationrulesv3.HeaderMutation{Action: &mutationrulesv3.HeaderMutation_Remove{Remove: h}})
		}
		m, err := anypb.New(&earlymutationv3.HeaderMutation{Mutations: mutations})
		if err != nil {
			return fmt.Errorf("packing the trace context's removal: %w", err)
		}
		hcm.EarlyHeaderMutationExtensions = append(hcm.EarlyHeaderMutationExtensions, &corev3.TypedExtensionConfig{Name: "ingress-xds.untrusted-trace-context", TypedConfig: m})
	}
	return nil
}

// tracingSampler is the tracer's sampler: none for all traces (the
// routes' 100%); the share of traces by their id; within the parent's
// decision when the client's trace context has one.
func tracingSampler(t *ir.Tracing) (*corev3.TypedExtensionConfig, error) {
	if t.Ratio >= 1 && !t.ParentBased {
		return nil, nil
	}
	ext := func(name string, m proto.Message) (*corev3.TypedExtensionConfig, error) {
		a, err := anypb.New(m)
		if err != nil {
			return nil, fmt.Errorf("packing the %s sampler: %w", name, err)
		}
		return &corev3.TypedExtensionConfig{Name: "envoy.tracers.opentelemetry.samplers." + name, TypedConfig: a}, nil
	}
	var inner *corev3.TypedExtensionConfig
	var err error
	if t.Ratio >= 1 {
		inner, err = ext("always_on", &samplersv3.AlwaysOnSamplerConfig{})
	} else {
		inner, err = ext("trace_id_ratio_based", &samplersv3.TraceIdRatioBasedSamplerConfig{SamplingPercentage: &typev3.FractionalPercent{
			Numerator: uint32(t.Ratio * 1e6), Denominator: typev3.FractionalPercent_MILLION,
		}})
	}
	if err != nil || !t.ParentBased {
		return inner, err
	}
	return ext("parent_based", &samplersv3.ParentBasedSamplerConfig{WrappedSampler: inner})
}

// routeTracing samples all of a traced route's requests and names its
// spans.
func routeTracing(route *routev3.Route, t *ir.RouteTracing) filterSet {
	all := &typev3.FractionalPercent{Numerator: 100}
	route.Tracing = &routev3.Tracing{ClientSampling: all, RandomSampling: all, OverallSampling: all}
	if t.Operation != "" {
		route.Decorator = &routev3.Decorator{Operation: t.Operation}
	}
	return useTracing
}

// otlpCluster is the collector's cluster, over HTTP/2 (gRPC): its address,
// or its name resolved by Envoy (the operator's ConfigMap names it, no
// Ingress).
func otlpCluster(t *ir.Tracing) (*clusterv3.Cluster, error) {
	c := staticCluster(OTLPCluster, t.CollectorHost, t.CollectorPort)
	if _, err := netip.ParseAddr(t.CollectorHost); err != nil {
		c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS}
	}
	opts, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("packing the collector's protocol options: %w", err)
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}
	return c, nil
}

// withOTLPCluster is the clusters with the collector's, in name order,
// when some listener's traced routes need it. As withAuthzCluster, what
// did not change keeps its identity: the list is made again only when the
// one it adds to or the collector changes.
func (c *Renderer) withOTLPCluster(clusters []Cluster, m *ir.IR, uses filterSet) ([]Cluster, error) {
	if uses&useTracing == 0 {
		return clusters, nil
	}
	var t *ir.Tracing
	for _, l := range m.Listeners {
		if l.Tracing != nil {
			t = l.Tracing
			break
		}
	}
	if t == nil {
		return clusters, nil
	}
	o := &c.otlp
	if o.cluster == nil || o.host != t.CollectorHost || o.port != t.CollectorPort {
		oc, err := otlpCluster(t)
		if err != nil {
			return nil, err
		}
		*o = otlpClusters{cluster: oc, host: t.CollectorHost, port: t.CollectorPort}
	}
	if o.with != nil && len(o.base) == len(clusters) && (len(clusters) == 0 || &o.base[0] == &clusters[0]) {
		return o.with, nil
	}
	i, _ := slices.BinarySearchFunc(clusters, OTLPCluster, func(cl Cluster, name string) int { return strings.Compare(cl.GetName(), name) })
	o.base, o.with = clusters, slices.Insert(slices.Clip(clusters), i, Cluster(o.cluster))
	return o.with, nil
}

// otlpClusters is what withOTLPCluster remembers.
type otlpClusters struct {
	cluster    *clusterv3.Cluster
	host       string
	port       uint32
	base, with []Cluster
}

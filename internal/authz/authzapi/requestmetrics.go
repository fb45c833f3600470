package authzapi

// The request metrics (ingress-nginx's nginx_ingress_controller_requests
// and its histograms) are counted by the service from the access log
// entries Envoy streams to it over the gRPC access log service
// (envoy.access_loggers.http_grpc). Each entry carries the route's names
// as custom tags (CommonGrpcAccessLogConfig.custom_tags) of these names,
// read from the route's metadata; an entry without MetricsNamespace is not
// counted.
const (
	// MetricsLogName is the access log's log_name, which the service
	// does not read: it names the stream in Envoy's stats.
	MetricsLogName = "ingress-xds-request-metrics"
	// MetricsNamespace and MetricsIngress are the route's Ingress
	// ($namespace, $ingress_name).
	MetricsNamespace = "namespace"
	MetricsIngress   = "ingress"
	// MetricsService is its Ingress backend's Service ($service_name; a
	// canary's routes say the mainline's).
	MetricsService = "service"
	// MetricsPath is the Ingress path as written ($location_path).
	MetricsPath = "path"
	// MetricsCanaryCluster is the canary's cluster of a route a canary
	// may take, MetricsCanaryUpstream its upstream name: when the request
	// went to that cluster, its canary label is that name
	// ($proxy_alternative_upstream_name).
	MetricsCanaryCluster  = "canary_cluster"
	MetricsCanaryUpstream = "canary_upstream"
	// MetricsUpstreamConnect is the upstream connection's timing
	// (MetricsUpstreamConnectFormat), for $upstream_connect_time.
	MetricsUpstreamConnect = "upstream_connect"
)

// MetricsUpstreamConnectFormat is MetricsUpstreamConnect's value, an
// Envoy substitution format (the tag's value field, Envoy 1.37 and
// later): three durations in microseconds, separated by spaces, each
// empty when Envoy has none (a tag's formatter writes nothing where an
// access log writes "-"):
//
//   - from the request's first byte to the start of the upstream
//     connection's connect: "-" when the connection began before the
//     request (a pooled connection, reused) or there was none;
//   - from that start to the connection's establishment (TCP);
//   - from that start to the end of its TLS handshake ("-" for plain
//     TCP).
//
// Envoy keeps a pooled connection's own connect times for every request
// it carries: the first field alone tells a new connection from a reused
// one, whose connect time is 0 for nginx.
const MetricsUpstreamConnectFormat = "%COMMON_DURATION(DS_RX_BEG:US_CX_BEG:us)% %COMMON_DURATION(US_CX_BEG:US_CX_END:us)% %COMMON_DURATION(US_CX_BEG:US_HS_END:us)%"

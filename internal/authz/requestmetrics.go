package authz

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"

	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// The request metrics of ingress-nginx's collector (its
// internal/ingress/metric/collectors/socket.go), under its names, help
// strings, label names and buckets, counted from the access log entries
// Envoy streams over its gRPC access log service
// (envoy.access_loggers.http_grpc): ingress-nginx's Lua monitor sends its
// collector the same figures of every request (rootfs/etc/nginx/lua/monitor.lua).

// requestLabels are socket.go's requestTags with "host" (its
// --metrics-per-host, on by default).
var requestLabels = []string{"status", "method", "path", "namespace", "ingress", "service", "canary", "host"}

// The buckets of ingress-nginx's flags (pkg/flags/flags.go):
// --time-buckets, --length-buckets, --size-buckets.
var (
	timeBuckets   = prometheus.DefBuckets
	lengthBuckets = prometheus.LinearBuckets(10, 10, 10)
	sizeBuckets   = prometheus.ExponentialBuckets(10, 10, 7)
)

// Controller is what ingress-nginx's request metrics say of the
// controller as constant labels: the pod's namespace and name and the
// controller class.
type Controller struct {
	Namespace, Class, Pod string
}

// RequestMetrics is the gRPC access log service whose entries it counts
// as ingress-nginx's request metrics, in a registry of its own
// (Registry). Entries without the route's names (a request for a host
// no Ingress serves, or with no route) are not counted, as ingress-nginx
// does not count its default server's requests by default
// (--metrics-per-undefined-host false).
type RequestMetrics struct {
	logger   *slog.Logger
	registry *prometheus.Registry

	requests                                 *prometheus.CounterVec
	requestTime, responseTime, headerTime    *prometheus.HistogramVec
	requestLength, responseLength, bytesSent *prometheus.HistogramVec
}

// NewRequestMetrics returns the service with its metrics registered.
func NewRequestMetrics(logger *slog.Logger, ctl Controller) *RequestMetrics {
	constLabels := prometheus.Labels{"controller_namespace": ctl.Namespace, "controller_class": ctl.Class, "controller_pod": ctl.Pod}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "nginx_ingress_controller", Name: name, Help: help, ConstLabels: constLabels, Buckets: buckets,
		}, requestLabels)
	}
	m := &RequestMetrics{
		logger:   logger,
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "nginx_ingress_controller", Name: "requests", Help: "The total number of client requests", ConstLabels: constLabels,
		}, requestLabels),
		// The help strings are ingress-nginx's, its slips included.
		requestTime:    histogram("request_duration_seconds", "The request processing time in milliseconds", timeBuckets),
		responseTime:   histogram("response_duration_seconds", "The time spent on receiving the response from the upstream server", timeBuckets),
		headerTime:     histogram("header_duration_seconds", "The time spent on receiving first header from the upstream server", timeBuckets),
		requestLength:  histogram("request_size", "The request length (including request line, header, and request body)", lengthBuckets),
		responseLength: histogram("response_size", "The response length (including request line, header, and request body)", lengthBuckets),
		bytesSent:      histogram("bytes_sent", "DEPRECATED The number of bytes sent to a client", sizeBuckets),
	}
	m.registry.MustRegister(m.requests, m.requestTime, m.responseTime, m.headerTime, m.requestLength, m.responseLength, m.bytesSent)
	return m
}

// Registry is the registry holding the metrics, to serve on /metrics.
func (m *RequestMetrics) Registry() *prometheus.Registry { return m.registry }

// StreamAccessLogs counts each HTTP entry of an Envoy's stream.
func (m *RequestMetrics) StreamAccessLogs(stream accesslogv3.AccessLogService_StreamAccessLogsServer) error {
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&accesslogv3.StreamAccessLogsResponse{})
		}
		if err != nil {
			return err
		}
		for _, e := range msg.GetHttpLogs().GetLogEntry() {
			m.observe(e)
		}
	}
}

// observe counts one request as monitor.lua and socket.go do.
func (m *RequestMetrics) observe(e *accesslogdatav3.HTTPAccessLogEntry) {
	c := e.GetCommonProperties()
	tags := c.GetCustomTags()
	namespace := tags[authzapi.MetricsNamespace]
	if namespace == "" {
		return
	}
	req, resp := e.GetRequest(), e.GetResponse()
	status := ""
	if code := resp.GetResponseCode(); code != nil {
		status = strconv.Itoa(int(code.GetValue()))
	}
	// $proxy_alternative_upstream_name: the canary's upstream when the
	// canary took the request.
	canary := ""
	if cl := tags[authzapi.MetricsCanaryCluster]; cl != "" && cl == c.GetUpstreamCluster() {
		canary = tags[authzapi.MetricsCanaryUpstream]
	}
	labels := prometheus.Labels{
		"status": status, "method": req.GetRequestMethod().String(), "path": tags[authzapi.MetricsPath],
		"namespace": namespace, "ingress": tags[authzapi.MetricsIngress], "service": tags[authzapi.MetricsService],
		"canary": canary, "host": hostOf(req.GetAuthority()),
	}
	m.requests.With(labels).Inc()
	// $request_time: from the request's first byte to the response's
	// last.
	if d := c.GetTimeToLastDownstreamTxByte(); d != nil {
		m.requestTime.With(labels).Observe(seconds(d))
	}
	// $upstream_response_time: from the request sent upstream to the
	// response's last byte; only for a request that reached one.
	if first, last := c.GetTimeToFirstUpstreamTxByte(), c.GetTimeToLastUpstreamRxByte(); first != nil && last != nil {
		m.responseTime.With(labels).Observe(seconds(last) - seconds(first))
	}
	// $upstream_header_time: from the request sent upstream to the
	// response's first byte (nginx counts from connecting: Envoy's entry
	// has no connection time, and a pooled connection takes none).
	if first, header := c.GetTimeToFirstUpstreamTxByte(), c.GetTimeToFirstUpstreamRxByte(); first != nil && header != nil {
		m.headerTime.With(labels).Observe(seconds(header) - seconds(first))
	}
	// $request_length (request line, headers and body) and $bytes_sent
	// (the status line, headers and body): the bytes on the wire, or,
	// where Envoy gives none, its count of the headers and the body.
	received, sent := float64(c.GetDownstreamWireBytesReceived()), float64(c.GetDownstreamWireBytesSent())
	if received == 0 {
		received = float64(req.GetRequestHeadersBytes() + req.GetRequestBodyBytes())
	}
	if sent == 0 {
		sent = float64(resp.GetResponseHeadersBytes() + resp.GetResponseBodyBytes())
	}
	m.requestLength.With(labels).Observe(received)
	m.bytesSent.With(labels).Observe(sent)
	m.responseLength.With(labels).Observe(sent)
}

func seconds(d *durationpb.Duration) float64 { return d.AsDuration().Seconds() }

// hostOf is nginx's $host of a request's authority: the name without
// its port, lowercase.
func hostOf(authority string) string {
	if h, _, err := net.SplitHostPort(authority); err == nil {
		authority = h
	}
	return strings.ToLower(authority)
}

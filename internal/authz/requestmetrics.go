package authz

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// The request metrics of ingress-nginx's collector (its
// internal/ingress/metric/collectors/socket.go), under its names, help
// strings, label names and buckets, counted from the access log entries
// Envoy streams over its gRPC access log service
// (envoy.access_loggers.http_grpc): ingress-nginx's Lua monitor sends its
// collector the same figures of every request (rootfs/etc/nginx/lua/monitor.lua).

// requestLabels are socket.go's requestTags; "host" is added with its
// --metrics-per-host (on by default).
var requestLabels = []string{"status", "method", "path", "namespace", "ingress", "service", "canary"}

// RequestMetricsOptions are ingress-nginx's flags of its collector
// (pkg/flags/flags.go), of the same names and meanings, given to authz.
type RequestMetricsOptions struct {
	// MetricsPerHost adds the label "host" (--metrics-per-host, on by
	// default). Without it every request is counted, a host no Ingress
	// serves too, as socket.go's filter applies only per host.
	MetricsPerHost bool
	// MetricsPerUndefinedHost counts, per host, the requests no Ingress
	// routed too, with empty Ingress names (--metrics-per-undefined-host;
	// it needs MetricsPerHost).
	MetricsPerUndefinedHost bool
	// ReportStatusClasses gives the status as its class, "2xx" to "5xx"
	// (--report-status-classes).
	ReportStatusClasses bool
	// The histograms' buckets (--time-buckets, --length-buckets,
	// --size-buckets).
	TimeBuckets, LengthBuckets, SizeBuckets []float64
	// ExcludeMetrics are metrics neither counted nor served, by name with
	// or without "nginx_ingress_controller_" (--exclude-socket-metrics);
	// other names are ignored, as by ingress-nginx.
	ExcludeMetrics []string
}

// DefaultRequestMetricsOptions are ingress-nginx's defaults.
func DefaultRequestMetricsOptions() RequestMetricsOptions {
	return RequestMetricsOptions{
		MetricsPerHost: true,
		TimeBuckets:    prometheus.DefBuckets,
		LengthBuckets:  prometheus.LinearBuckets(10, 10, 10),
		SizeBuckets:    prometheus.ExponentialBuckets(10, 10, 7),
	}
}

// Validate refuses what ingress-nginx refuses (--metrics-per-undefined-host
// without --metrics-per-host), and buckets the histograms would panic on.
func (o RequestMetricsOptions) Validate() error {
	if o.MetricsPerUndefinedHost && !o.MetricsPerHost {
		return errors.New("--metrics-per-undefined-host=true must be passed with --metrics-per-host=true")
	}
	for _, b := range []struct {
		flag    string
		buckets []float64
	}{{"--time-buckets", o.TimeBuckets}, {"--length-buckets", o.LengthBuckets}, {"--size-buckets", o.SizeBuckets}} {
		for i := 1; i < len(b.buckets); i++ {
			if b.buckets[i] <= b.buckets[i-1] {
				return fmt.Errorf("%s must be in increasing order", b.flag)
			}
		}
	}
	return nil
}

// Controller is what ingress-nginx's request metrics say of the
// controller as constant labels: the pod's namespace and name and the
// controller class.
type Controller struct {
	Namespace, Class, Pod string
}

// RequestMetrics is the gRPC access log service whose entries it counts
// as ingress-nginx's request metrics, in a registry of its own
// (Gatherer). Entries without the route's names (a request for a host
// no Ingress serves, or with no route) are counted only as socket.go
// counts its default server's: without --metrics-per-host, or with
// --metrics-per-undefined-host. An excluded metric is nil.
type RequestMetrics struct {
	logger   *slog.Logger
	registry *prometheus.Registry
	opts     RequestMetricsOptions
	// counting is held for reading while an entry is counted and for
	// writing while the metrics are gathered, so that a scrape sees each
	// request in every metric or in none: a dashboard dividing a
	// histogram's count by the counter, or a test waiting for the
	// counter, never reads a request half counted.
	counting sync.RWMutex

	requests                                           *prometheus.CounterVec
	requestTime, responseTime, headerTime, connectTime *prometheus.HistogramVec
	requestLength, responseLength, bytesSent           *prometheus.HistogramVec
}

// NewRequestMetrics returns the service with its metrics registered;
// opts must be valid (Validate).
func NewRequestMetrics(logger *slog.Logger, ctl Controller, opts RequestMetricsOptions) *RequestMetrics {
	constLabels := prometheus.Labels{"controller_namespace": ctl.Namespace, "controller_class": ctl.Class, "controller_pod": ctl.Pod}
	labels := slices.Clone(requestLabels)
	if opts.MetricsPerHost {
		labels = append(labels, "host")
	}
	excluded := map[string]bool{}
	for _, name := range opts.ExcludeMetrics {
		excluded[strings.TrimPrefix(name, "nginx_ingress_controller_")] = true
	}
	m := &RequestMetrics{logger: logger, registry: prometheus.NewRegistry(), opts: opts}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		if excluded[name] {
			return nil
		}
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "nginx_ingress_controller", Name: name, Help: help, ConstLabels: constLabels, Buckets: buckets,
		}, labels)
		m.registry.MustRegister(h)
		return h
	}
	if !excluded["requests"] {
		m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "nginx_ingress_controller", Name: "requests", Help: "The total number of client requests", ConstLabels: constLabels,
		}, labels)
		m.registry.MustRegister(m.requests)
	}
	// The help strings are ingress-nginx's, its slips included.
	m.connectTime = histogram("connect_duration_seconds", "The time spent on establishing a connection with the upstream server", opts.TimeBuckets)
	m.headerTime = histogram("header_duration_seconds", "The time spent on receiving first header from the upstream server", opts.TimeBuckets)
	m.responseTime = histogram("response_duration_seconds", "The time spent on receiving the response from the upstream server", opts.TimeBuckets)
	m.requestTime = histogram("request_duration_seconds", "The request processing time in milliseconds", opts.TimeBuckets)
	m.responseLength = histogram("response_size", "The response length (including request line, header, and request body)", opts.LengthBuckets)
	m.requestLength = histogram("request_size", "The request length (including request line, header, and request body)", opts.LengthBuckets)
	m.bytesSent = histogram("bytes_sent", "DEPRECATED The number of bytes sent to a client", opts.SizeBuckets)
	return m
}

// Gatherer gathers the metrics, to serve on /metrics, each request
// counted whole.
func (m *RequestMetrics) Gatherer() prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		m.counting.Lock()
		defer m.counting.Unlock()
		return m.registry.Gather()
	})
}

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
	req, resp := e.GetRequest(), e.GetResponse()
	host := hostOf(req.GetAuthority())
	// No route's names: socket.go's default server, whose requests it
	// leaves out per host unless --metrics-per-undefined-host, and
	// counts with empty names.
	if namespace == "" && m.opts.MetricsPerHost && !m.opts.MetricsPerUndefinedHost {
		return
	}
	status := ""
	if code := resp.GetResponseCode(); code != nil {
		status = strconv.Itoa(int(code.GetValue()))
		if m.opts.ReportStatusClasses {
			status = status[:1] + "xx"
		}
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
		"canary": canary,
	}
	if m.opts.MetricsPerHost {
		labels["host"] = host
	}
	m.counting.RLock()
	defer m.counting.RUnlock()
	if m.requests != nil {
		m.requests.With(labels).Inc()
	}
	// $request_time: from the request's first byte to the response's
	// last.
	if d := c.GetTimeToLastDownstreamTxByte(); d != nil {
		observe(m.requestTime, labels, seconds(d))
	}
	// $upstream_response_time: from the request sent upstream to the
	// response's last byte; only for a request that reached one.
	if first, last := c.GetTimeToFirstUpstreamTxByte(), c.GetTimeToLastUpstreamRxByte(); first != nil && last != nil {
		observe(m.responseTime, labels, seconds(last)-seconds(first))
	}
	// $upstream_connect_time: the connection's establishment (its TLS
	// handshake included), 0 on a reused one; none without a
	// connection.
	cx := upstreamConnectOf(tags[authzapi.MetricsUpstreamConnect])
	if cx.known {
		observe(m.connectTime, labels, cx.connect)
	}
	// $upstream_header_time: from connecting (on a reused connection,
	// from sending the request) to the response's first byte.
	if first, header := c.GetTimeToFirstUpstreamTxByte(), c.GetTimeToFirstUpstreamRxByte(); first != nil && header != nil {
		start := seconds(first)
		if cx.known && cx.fresh {
			start = cx.start
		}
		observe(m.headerTime, labels, seconds(header)-start)
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
	observe(m.requestLength, labels, received)
	observe(m.bytesSent, labels, sent)
	observe(m.responseLength, labels, sent)
}

// observe observes v in h unless h is excluded.
func observe(h *prometheus.HistogramVec, labels prometheus.Labels, v float64) {
	if h != nil {
		h.With(labels).Observe(v)
	}
}

// upstreamConnect is the tag authzapi.MetricsUpstreamConnect, read.
type upstreamConnect struct {
	known bool    // the request had an established upstream connection
	fresh bool    // made for this request (else reused)
	start float64 // when its connect began, in seconds after the request's first byte (fresh only)
	// connect is $upstream_connect_time in seconds: the TCP connect, or
	// its TLS handshake's end when there was one; 0 when reused.
	connect float64
}

// upstreamConnectOf reads authzapi.MetricsUpstreamConnectFormat's three
// durations in microseconds, empty (or "-") for none.
func upstreamConnectOf(tag string) upstreamConnect {
	f := strings.Split(tag, " ")
	if len(f) != 3 {
		return upstreamConnect{}
	}
	us := func(s string) (float64, bool) {
		n, err := strconv.ParseUint(s, 10, 63)
		return float64(n) / 1e6, err == nil
	}
	tcp, ok := us(f[1])
	if !ok {
		return upstreamConnect{} // no connection established
	}
	start, fresh := us(f[0])
	if !fresh {
		return upstreamConnect{known: true} // a pooled connection: no connect
	}
	if tls, ok := us(f[2]); ok {
		tcp = tls
	}
	return upstreamConnect{known: true, fresh: true, start: start, connect: tcp}
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

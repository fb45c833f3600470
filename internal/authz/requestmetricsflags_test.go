package authz

import (
	"flag"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// parseMetricsFlags parses args as authz does ingress-nginx's flags.
func parseMetricsFlags(t *testing.T, args ...string) (RequestMetricsOptions, error) {
	t.Helper()
	fs := flag.NewFlagSet("authz", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := DefaultRequestMetricsOptions()
	o.RegisterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// metricsWith is the service of those flags, fed entries directly.
func metricsWith(t *testing.T, args ...string) *RequestMetrics {
	t.Helper()
	o, err := parseMetricsFlags(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return NewRequestMetrics(slog.New(slog.DiscardHandler), Controller{Namespace: "ingress-nginx", Class: "k8s.io/ingress-nginx", Pod: "envoy-0"}, o)
}

// routed is an entry of a request an Ingress's route took to a backend
// over a connection made for it (plain TCP: 30 µs, begun 100 µs after
// the request's first byte), or over a reused one.
func routed(authority string, status uint32, reused bool) *accesslogdatav3.HTTPAccessLogEntry {
	connect := "100 30 " // as Envoy sends it: nothing for none
	if reused {
		connect = " 30 "
	}
	return &accesslogdatav3.HTTPAccessLogEntry{
		CommonProperties: &accesslogdatav3.AccessLogCommon{
			UpstreamCluster: "shop/web/80",
			CustomTags: map[string]string{
				authzapi.MetricsNamespace: "shop", authzapi.MetricsIngress: "web", authzapi.MetricsService: "web", authzapi.MetricsPath: "/cart",
				authzapi.MetricsUpstreamConnect: connect,
			},
			TimeToLastDownstreamTxByte: durationpb.New(2e6),
			TimeToFirstUpstreamTxByte:  durationpb.New(2e5), TimeToFirstUpstreamRxByte: durationpb.New(1e6), TimeToLastUpstreamRxByte: durationpb.New(15e5),
			DownstreamWireBytesReceived: 42, DownstreamWireBytesSent: 420,
		},
		Request:  &accesslogdatav3.HTTPRequestProperties{RequestMethod: corev3.RequestMethod_GET, Authority: authority},
		Response: &accesslogdatav3.HTTPResponseProperties{ResponseCode: wrapperspb.UInt32(status)},
	}
}

// unrouted is an entry of a request for a host no Ingress serves,
// answered by Envoy.
func unrouted(authority string) *accesslogdatav3.HTTPAccessLogEntry {
	return &accesslogdatav3.HTTPAccessLogEntry{
		CommonProperties: &accesslogdatav3.AccessLogCommon{TimeToLastDownstreamTxByte: durationpb.New(1e5),
			CustomTags: map[string]string{authzapi.MetricsUpstreamConnect: "  "}},
		Request:  &accesslogdatav3.HTTPRequestProperties{RequestMethod: corev3.RequestMethod_GET, Authority: authority},
		Response: &accesslogdatav3.HTTPResponseProperties{ResponseCode: wrapperspb.UInt32(404)},
	}
}

// gathered is each metric's series: its labels (the controller's left
// out) and its count or sample count.
func gathered(t *testing.T, m *RequestMetrics) map[string]map[string]float64 {
	t.Helper()
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]float64{}
	for _, mf := range mfs {
		series := map[string]float64{}
		for _, s := range mf.GetMetric() {
			var parts []string
			for _, l := range s.GetLabel() {
				if !strings.HasPrefix(l.GetName(), "controller_") {
					parts = append(parts, l.GetName()+"="+l.GetValue())
				}
			}
			v := s.GetCounter().GetValue()
			if mf.GetType() == dto.MetricType_HISTOGRAM {
				v = float64(s.GetHistogram().GetSampleCount())
			}
			series[strings.Join(parts, ",")] = v
		}
		out[strings.TrimPrefix(mf.GetName(), "nginx_ingress_controller_")] = series
	}
	return out
}

func TestRequestMetricsFlagsParse(t *testing.T) {
	o, err := parseMetricsFlags(t)
	if err != nil {
		t.Fatal(err)
	}
	// pkg/flags/flags.go's defaults.
	if !o.MetricsPerHost || o.MetricsPerUndefinedHost || o.ReportStatusClasses || len(o.ExcludeMetrics) != 0 ||
		!slices.Equal(o.TimeBuckets, []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}) ||
		!slices.Equal(o.LengthBuckets, []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}) ||
		!slices.Equal(o.SizeBuckets, []float64{10, 100, 1000, 10000, 100000, 1e6, 1e7}) {
		t.Errorf("defaults %+v, want ingress-nginx's", o)
	}
	o, err = parseMetricsFlags(t, "--metrics-per-host=false", "--report-status-classes", "--time-buckets=0.1,1", "--time-buckets", "10",
		"--length-buckets=100", "--size-buckets=1e3,1e6", "--exclude-socket-metrics=nginx_ingress_controller_requests, bytes_sent")
	if err != nil {
		t.Fatal(err)
	}
	if o.MetricsPerHost || !o.ReportStatusClasses || !slices.Equal(o.TimeBuckets, []float64{0.1, 1, 10}) ||
		!slices.Equal(o.LengthBuckets, []float64{100}) || !slices.Equal(o.SizeBuckets, []float64{1e3, 1e6}) ||
		!slices.Equal(o.ExcludeMetrics, []string{"nginx_ingress_controller_requests", "bytes_sent"}) {
		t.Errorf("parsed %+v", o)
	}
	for _, bad := range [][]string{
		{"--metrics-per-undefined-host", "--metrics-per-host=false"}, // as ingress-nginx refuses it
		{"--time-buckets=1,0.5"},
		{"--size-buckets=10,10"},
		{"--length-buckets=ten"},
	} {
		if _, err := parseMetricsFlags(t, bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestMetricsPerHost: socket.go's metricsPerHost. On (the default), the
// host is a label and a host no Ingress serves is left out unless
// --metrics-per-undefined-host, which counts it with empty names; off,
// no host label, and every request counted (socket.go filters by host
// only per host).
func TestMetricsPerHost(t *testing.T) {
	const routedSeries = "canary=,host=shop.example.com,ingress=web,method=GET,namespace=shop,path=/cart,service=web,status=200"
	for _, c := range []struct {
		args []string
		want map[string]float64
	}{
		{nil, map[string]float64{routedSeries: 2}},
		{[]string{"--metrics-per-undefined-host"}, map[string]float64{
			routedSeries: 2,
			"canary=,host=nobody.example.com,ingress=,method=GET,namespace=,path=,service=,status=404": 1,
		}},
		{[]string{"--metrics-per-host=false"}, map[string]float64{
			"canary=,ingress=web,method=GET,namespace=shop,path=/cart,service=web,status=200": 2,
			"canary=,ingress=,method=GET,namespace=,path=,service=,status=404":                1,
		}},
	} {
		m := metricsWith(t, c.args...)
		m.observe(routed("shop.example.com", 200, false))
		m.observe(routed("Shop.example.com:80", 200, true))
		m.observe(unrouted("nobody.example.com"))
		got := gathered(t, m)
		for _, name := range []string{"requests", "request_duration_seconds", "request_size"} {
			if !mapsEqual(got[name], c.want) {
				t.Errorf("%v: %s %v, want %v", c.args, name, got[name], c.want)
			}
		}
	}
}

func TestReportStatusClasses(t *testing.T) {
	m := metricsWith(t, "--report-status-classes")
	for _, status := range []uint32{200, 204, 301, 404, 503} {
		m.observe(routed("shop.example.com", status, true))
	}
	got := map[string]float64{}
	for k, v := range gathered(t, m)["requests"] {
		got[k[strings.LastIndex(k, "status="):]] = v
	}
	want := map[string]float64{"status=2xx": 2, "status=3xx": 1, "status=4xx": 1, "status=5xx": 1}
	if !mapsEqual(got, want) {
		t.Errorf("requests by status %v, want %v", got, want)
	}
}

// TestExcludeSocketMetrics: the excluded metrics, named with or without
// the namespace, are neither counted nor served; a name of no metric
// changes nothing (ingress-nginx's test/e2e/metrics/metrics.go).
func TestExcludeSocketMetrics(t *testing.T) {
	all := []string{"bytes_sent", "connect_duration_seconds", "header_duration_seconds", "request_duration_seconds", "request_size",
		"requests", "response_duration_seconds", "response_size"}
	for _, c := range []struct {
		flag string
		want []string
	}{
		{"--exclude-socket-metrics=nginx_ingress_controller_request_size,header_duration_seconds",
			[]string{"bytes_sent", "connect_duration_seconds", "request_duration_seconds", "requests", "response_duration_seconds", "response_size"}},
		{"--exclude-socket-metrics=non_existing_metric_does_not_affect_existing_metrics", all},
		{"--exclude-socket-metrics=requests", slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "requests" })},
	} {
		m := metricsWith(t, c.flag)
		m.observe(routed("shop.example.com", 200, false))
		var got []string
		for name := range gathered(t, m) {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: served %v, want %v", c.flag, got, c.want)
		}
	}
}

func TestBucketFlags(t *testing.T) {
	m := metricsWith(t, "--time-buckets=0.5,1", "--length-buckets=50", "--size-buckets=100,1000")
	m.observe(routed("shop.example.com", 200, false))
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{
		"request_duration_seconds": {0.5, 1}, "response_duration_seconds": {0.5, 1}, "header_duration_seconds": {0.5, 1},
		"connect_duration_seconds": {0.5, 1}, "request_size": {50}, "response_size": {50}, "bytes_sent": {100, 1000},
	}
	for _, mf := range mfs {
		name := strings.TrimPrefix(mf.GetName(), "nginx_ingress_controller_")
		w, ok := want[name]
		if !ok {
			continue
		}
		delete(want, name)
		var bounds []float64
		for _, b := range mf.GetMetric()[0].GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if !slices.Equal(bounds, w) { // Gather leaves +Inf out
			t.Errorf("%s buckets %v, want %v", name, bounds, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("not served: %v", want)
	}
}

// TestConnectAndHeaderTime: $upstream_connect_time and
// $upstream_header_time as nginx gives them (monitor.lua sends -1, and
// socket.go observes nothing, where nginx has none): the connect, its
// TLS handshake included, on a new connection, 0 on a reused one, none
// without one; the header time from connecting, or on a reused
// connection from sending the request.
func TestConnectAndHeaderTime(t *testing.T) {
	for _, c := range []struct {
		tag            string
		known          bool
		connect, start float64
	}{
		// As Envoy 1.40 sends it (seen through TestRequestMetricsLikeIngressNginx).
		{"100 30 ", true, 30e-6, 100e-6},       // a new plain connection
		{"100 30 1500", true, 1500e-6, 100e-6}, // a new TLS connection: until its handshake's end
		{" 30 ", true, 0, 0},                   // a reused one: Envoy keeps its old connect time
		{" 30 1500", true, 0, 0},
		{"  ", false, 0, 0}, // no upstream (Envoy answered), or the connect failed
		{"", false, 0, 0},   // no tag (an older configuration)
		// As an access log writes it.
		{"100 30 -", true, 30e-6, 100e-6},
		{"- 30 -", true, 0, 0},
		{"- - -", false, 0, 0},
	} {
		cx := upstreamConnectOf(c.tag)
		if cx.known != c.known || math.Abs(cx.connect-c.connect) > 1e-12 || math.Abs(cx.start-c.start) > 1e-12 {
			t.Errorf("%q: %+v, want known %v connect %v start %v", c.tag, cx, c.known, c.connect, c.start)
		}
	}
	m := metricsWith(t)
	m.observe(routed("shop.example.com", 200, false)) // header 1 ms - 100 µs
	m.observe(routed("shop.example.com", 200, true))  // header 1 ms - 200 µs
	m.observe(unrouted("nobody.example.com"))
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string][2]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			sums[strings.TrimPrefix(mf.GetName(), "nginx_ingress_controller_")] = [2]float64{float64(s.GetHistogram().GetSampleCount()), s.GetHistogram().GetSampleSum()}
		}
	}
	if got := sums["connect_duration_seconds"]; got[0] != 2 || math.Abs(got[1]-30e-6) > 1e-12 {
		t.Errorf("connect_duration_seconds count and sum %v, want 2 and 30 µs", got)
	}
	if got := sums["header_duration_seconds"]; got[0] != 2 || math.Abs(got[1]-(900e-6+800e-6)) > 1e-12 {
		t.Errorf("header_duration_seconds count and sum %v, want 2 and 1.7 ms", got)
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

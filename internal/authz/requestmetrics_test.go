package authz

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	accesslogdatav3 "github.com/envoyproxy/go-control-plane/envoy/data/accesslog/v3"
	accesslogv3 "github.com/envoyproxy/go-control-plane/envoy/service/accesslog/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// TestRequestMetricsCountsEntries streams entries over real gRPC on
// loopback, as Envoy's http_grpc access log does, and reads the counter
// as Prometheus would (ingress-nginx's collectors/socket_test.go checks
// its collector the same way, from the messages monitor.lua sends): a
// routed entry is counted under its route's names with nginx's $host
// (no port, lowercase) and the canary's upstream when its cluster took
// the request; an entry without the route's names is not counted; a
// request that reached no backend has no upstream times.
func TestRequestMetricsCountsEntries(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	m := NewRequestMetrics(slog.New(slog.DiscardHandler), Controller{Namespace: "ingress-nginx", Class: "k8s.io/ingress-nginx", Pod: "envoy-0"}, DefaultRequestMetricsOptions())
	accesslogv3.RegisterAccessLogServiceServer(srv, m)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	stream, err := accesslogv3.NewAccessLogServiceClient(conn).StreamAccessLogs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{
		authzapi.MetricsNamespace: "shop", authzapi.MetricsIngress: "web", authzapi.MetricsService: "web", authzapi.MetricsPath: "/cart",
		authzapi.MetricsCanaryCluster: "shop/web-canary/80", authzapi.MetricsCanaryUpstream: "shop-web-canary-80",
	}
	entry := func(cluster, authority string, tags map[string]string, upstream bool) *accesslogdatav3.HTTPAccessLogEntry {
		c := &accesslogdatav3.AccessLogCommon{UpstreamCluster: cluster, CustomTags: tags, TimeToLastDownstreamTxByte: durationpb.New(2e6),
			DownstreamWireBytesReceived: 42, DownstreamWireBytesSent: 420}
		if upstream {
			c.TimeToFirstUpstreamTxByte, c.TimeToFirstUpstreamRxByte, c.TimeToLastUpstreamRxByte = durationpb.New(1e5), durationpb.New(1e6), durationpb.New(15e5)
		}
		return &accesslogdatav3.HTTPAccessLogEntry{
			CommonProperties: c,
			Request:          &accesslogdatav3.HTTPRequestProperties{RequestMethod: corev3.RequestMethod_POST, Authority: authority},
			Response:         &accesslogdatav3.HTTPResponseProperties{ResponseCode: wrapperspb.UInt32(201)},
		}
	}
	if err := stream.Send(&accesslogv3.StreamAccessLogsMessage{
		Identifier: &accesslogv3.StreamAccessLogsMessage_Identifier{LogName: authzapi.MetricsLogName},
		LogEntries: &accesslogv3.StreamAccessLogsMessage_HttpLogs{HttpLogs: &accesslogv3.StreamAccessLogsMessage_HTTPAccessLogEntries{LogEntry: []*accesslogdatav3.HTTPAccessLogEntry{
			entry("shop/web/80", "Shop.Example.com:8080", tags, true),
			entry("shop/web-canary/80", "shop.example.com", tags, true),
			entry("", "shop.example.com", tags, false), // answered by Envoy
			entry("", "nobody.example.com", nil, false),
		}}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.CloseAndRecv(); err != nil { // the service has read the stream to its end
		t.Fatal(err)
	}
	const labels = `controller_class="k8s.io/ingress-nginx",controller_namespace="ingress-nginx",controller_pod="envoy-0",host="shop.example.com",ingress="web",method="POST",namespace="shop",path="/cart",service="web",status="201"`
	want := `# HELP nginx_ingress_controller_requests The total number of client requests
# TYPE nginx_ingress_controller_requests counter
nginx_ingress_controller_requests{canary="",` + labels + `} 2
nginx_ingress_controller_requests{canary="shop-web-canary-80",` + labels + `} 1
`
	if err := testutil.GatherAndCompare(m.Gatherer(), strings.NewReader(want), "nginx_ingress_controller_requests"); err != nil {
		t.Error(err)
	}
	// The upstream's times: only the two entries that reached a backend.
	if n := testutil.CollectAndCount(m.headerTime); n != 2 {
		t.Errorf("header_duration_seconds has %d series, want 2 (the canary's and the mainline's)", n)
	}
	mfs, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "nginx_ingress_controller_response_duration_seconds" {
			continue
		}
		total := uint64(0)
		for _, s := range mf.GetMetric() {
			total += s.GetHistogram().GetSampleCount()
		}
		if total != 2 {
			t.Errorf("response_duration_seconds observed %d requests, want the 2 that reached a backend", total)
		}
	}
}

// TestRequestMetricsScrapeSeesRequestsWhole counts entries while
// scraping, as Prometheus scrapes a busy Envoy's service: every scrape
// must hold each request in the counter and in every histogram, or in
// none, so that a histogram's count never runs behind the counter (the
// e2e test waits for the counter, then reads the histograms).
func TestRequestMetricsScrapeSeesRequestsWhole(t *testing.T) {
	m := NewRequestMetrics(slog.New(slog.DiscardHandler), Controller{Namespace: "ingress-nginx", Class: "k8s.io/ingress-nginx", Pod: "envoy-0"}, DefaultRequestMetricsOptions())
	entry := &accesslogdatav3.HTTPAccessLogEntry{
		CommonProperties: &accesslogdatav3.AccessLogCommon{
			UpstreamCluster:           "shop/web/80",
			CustomTags:                map[string]string{authzapi.MetricsNamespace: "shop", authzapi.MetricsIngress: "web", authzapi.MetricsService: "web", authzapi.MetricsPath: "/"},
			TimeToFirstUpstreamTxByte: durationpb.New(1e5), TimeToFirstUpstreamRxByte: durationpb.New(1e6), TimeToLastUpstreamRxByte: durationpb.New(15e5),
			TimeToLastDownstreamTxByte: durationpb.New(2e6), DownstreamWireBytesReceived: 42, DownstreamWireBytesSent: 420,
		},
		Request:  &accesslogdatav3.HTTPRequestProperties{RequestMethod: corev3.RequestMethod_GET, Authority: "shop.example.com"},
		Response: &accesslogdatav3.HTTPResponseProperties{ResponseCode: wrapperspb.UInt32(200)},
	}
	const entries = 20000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range entries {
			m.observe(entry)
		}
	}()
	for scraping := true; scraping; {
		select {
		case <-done:
			scraping = false // one last scrape, of every entry
		default:
		}
		mfs, err := m.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]uint64{}
		for _, mf := range mfs {
			for _, s := range mf.GetMetric() {
				if h := s.GetHistogram(); h != nil {
					counts[mf.GetName()] += h.GetSampleCount()
				} else {
					counts[mf.GetName()] += uint64(s.GetCounter().GetValue())
				}
			}
		}
		requests := counts["nginx_ingress_controller_requests"]
		if !scraping && requests != entries {
			t.Fatalf("the last scrape counted %d requests, want %d", requests, entries)
		}
		for name, n := range counts {
			if n != requests {
				t.Fatalf("a scrape counted %d requests but %s observed %d", requests, name, n)
			}
		}
	}
}

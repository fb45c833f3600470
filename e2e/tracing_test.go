package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	collectortracev1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// otlpReceiver is a real OTLP/gRPC trace collector: it keeps every span
// Envoy exports, with its resource's service.name.
type otlpReceiver struct {
	collectortracev1.UnimplementedTraceServiceServer
	address string
	mu      sync.Mutex
	spans   []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracev1.Span
}

func (r *otlpReceiver) Export(_ context.Context, req *collectortracev1.ExportTraceServiceRequest) (*collectortracev1.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := attribute(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service: service, span: s})
			}
		}
	}
	return &collectortracev1.ExportTraceServiceResponse{}, nil
}

// spanFor is the span whose attributes hold the request ID, if any.
func (r *otlpReceiver) spanFor(requestID string) (receivedSpan, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if attribute(s.span.GetAttributes(), "guid:x-request-id") == requestID {
			return s, true
		}
	}
	return receivedSpan{}, false
}

func (r *otlpReceiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

func attribute(attrs []*commonv1.KeyValue, key string) string {
	for _, a := range attrs {
		if a.GetKey() == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	return startOTLPReceiverOn(t, "127.0.0.1:0")
}

// startOTLPReceiverOn serves the receiver on address.
func startOTLPReceiverOn(t testing.TB, address string) *otlpReceiver {
	t.Helper()
	lis, err := net.Listen("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	r := &otlpReceiver{address: lis.Addr().String()}
	collectortracev1.RegisterTraceServiceServer(srv, r)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return r
}

// TestOpenTelemetry checks ingress-nginx's OpenTelemetry keys (its
// test/e2e/settings/opentelemetry.go and annotations/opentelemetry.go,
// there checked on nginx's configuration) through a real Envoy and a real
// OTLP/gRPC receiver: a request's span arrives with the ConfigMap's
// otel-service-name, the Ingress's opentelemetry-operation-name, the HTTP
// attributes, and the backend gets a W3C traceparent of that span; a
// client's traceparent is the span's parent while trusted, and not once
// opentelemetry-trust-incoming-span is "false"; an Ingress with
// enable-opentelemetry "false" sends no span.
func TestOpenTelemetry(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	otlp := startOTLPReceiver(t)
	host, port, _ := net.SplitHostPort(otlp.address)
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", tracingIngressesYAML)
	config := map[string]string{"enable-opentelemetry": "true", "otlp-collector-host": host, "otlp-collector-port": port, "otel-service-name": "edge-proxy"}
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(config))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	for _, h := range []string{"traced.example.com", "quiet.example.com"} {
		framework.Eventually(t, convergeTimeout, h+" served", func() error { return envoy.Expect(h, "/", http.StatusOK, "alpha") })
	}
	send := func(host, id, traceparent string) (backendTraceparent string) {
		t.Helper()
		req := fmt.Sprintf("GET /shop?item=1 HTTP/1.1\r\nHost: %s\r\nX-Request-Id: %s\r\n", host, id)
		if traceparent != "" {
			req += "traceparent: " + traceparent + "\r\n"
		}
		replies, err := rawExchange(envoy.HTTPAddress, []string{req + "\r\n"})
		if err != nil || replies[0].status != http.StatusOK {
			t.Fatalf("%s: %v %+v", id, err, replies)
		}
		return echoHeader(t, replies[0].body, "Traceparent")
	}
	waitSpan := func(id string) receivedSpan {
		t.Helper()
		var s receivedSpan
		framework.Eventually(t, convergeTimeout, "the span of "+id, func() error {
			var ok bool
			if s, ok = otlp.spanFor(id); !ok {
				stats, _ := envoy.Stats(`tracing|opentelemetry`)
				return fmt.Errorf("no span with x-request-id %s among %d (%v)", id, otlp.count(), stats)
			}
			return nil
		})
		return s
	}

	// Request IDs in Envoy's UUID form, which its sampling reads, as
	// ingress-nginx's $req_id is random hex.
	const quietID, tracedID, trustedID = "6a0f0b4c-0000-4000-8000-000000000001", "6a0f0b4c-0000-4000-8000-000000000002", "6a0f0b4c-0000-4000-8000-000000000003"
	// Not traced first, on the same worker: its span would be exported
	// with or before the next one's.
	// Envoy still tells the backend of a trace context, not sampled.
	if tp := send("quiet.example.com", quietID, ""); tp != "" && !strings.HasSuffix(tp, "-00") {
		t.Errorf("an untraced request reached the backend with a sampled traceparent %q", tp)
	}
	backendTP := send("traced.example.com", tracedID, "")
	s := waitSpan(tracedID)
	if _, ok := otlp.spanFor(quietID); ok {
		t.Errorf("the Ingress with enable-opentelemetry \"false\" sent a span")
	}
	if s.service != "edge-proxy" || s.span.GetName() != "checkout" {
		t.Errorf("span of service %q named %q, want edge-proxy and checkout", s.service, s.span.GetName())
	}
	for key, want := range map[string]string{"http.method": "GET", "http.url": "http://traced.example.com/shop?item=1", "http.status_code": "200"} {
		if got := attribute(s.span.GetAttributes(), key); got != want {
			t.Errorf("span attribute %s %q, want %q", key, got, want)
		}
	}
	traceID, spanID := hex.EncodeToString(s.span.GetTraceId()), hex.EncodeToString(s.span.GetSpanId())
	if parts := strings.Split(backendTP, "-"); len(parts) != 4 || parts[0] != "00" || parts[1] != traceID || parts[3] != "01" {
		t.Errorf("the backend's traceparent %q is not a sampled W3C context of trace %s", backendTP, traceID)
	} else if parts[2] == "" {
		t.Errorf("the backend's traceparent %q names no parent span (the span is %s)", backendTP, spanID)
	}

	// A client's sampled trace context is the parent, while trusted
	// (opentelemetry-trust-incoming-span's default, true).
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	incoming := "00-" + clientTrace + "-" + clientSpan + "-01"
	send("traced.example.com", trustedID, incoming)
	s = waitSpan(trustedID)
	if got := hex.EncodeToString(s.span.GetTraceId()); got != clientTrace || hex.EncodeToString(s.span.GetParentSpanId()) != clientSpan {
		t.Errorf("trusted: span of trace %s, parent %x; want the client's %s, %s", got, s.span.GetParentSpanId(), clientTrace, clientSpan)
	}

	// Untrusted, every request starts its own trace.
	config["opentelemetry-trust-incoming-span"] = "false"
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(config))
	try := 0
	framework.Eventually(t, convergeTimeout, "the client's trace context dropped", func() error {
		try++
		id := fmt.Sprintf("6a0f0b4c-0000-4000-8000-%012d", 100+try)
		send("traced.example.com", id, incoming)
		s := waitSpan(id)
		if got := hex.EncodeToString(s.span.GetTraceId()); got == clientTrace || len(s.span.GetParentSpanId()) != 0 {
			return fmt.Errorf("span of trace %s, parent %x: still the client's", got, s.span.GetParentSpanId())
		}
		return nil
	})
}

// echoHeader is a request header the echo backend saw.
func echoHeader(t *testing.T, body []byte, name string) string {
	t.Helper()
	var r struct {
		Header http.Header `json:"header"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("the backend's reply %q: %v", body, err)
	}
	return r.Header.Get(name)
}

const tracingIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: traced
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/opentelemetry-operation-name: checkout}
spec:
  rules:
  - host: traced.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: quiet
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/enable-opentelemetry: "false"}
spec:
  rules:
  - host: quiet.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

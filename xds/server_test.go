package xds

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate"
)

func testFixture() fixture {
	return fixture{listenerPort: 10080, clusters: map[string][]string{
		"a": {"10.0.0.1:80", "10.0.0.2:80"},
		"b": {"10.0.1.1:80"},
	}}
}

// Versions come from content alone: resources built anew, by another
// Server, give the same versions; a change to one type changes that type's
// version and no other.
func TestVersionsAreContentHashes(t *testing.T) {
	f := testFixture()
	a, err := NewSnapshot(f.resources(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSnapshot(f.resources(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range servedTypes {
		if a.GetVersion(typ) == "" || a.GetVersion(typ) != b.GetVersion(typ) {
			t.Errorf("%s: versions %q and %q for the same content", typ, a.GetVersion(typ), b.GetVersion(typ))
		}
		for name, v := range a.GetVersionMap(typ) {
			if b.GetVersionMap(typ)[name] != v {
				t.Errorf("%s %s: resource versions differ for the same content", typ, name)
			}
		}
	}

	f.clusters["b"] = []string{"10.0.1.2:80"}
	c, err := NewSnapshot(f.resources(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range servedTypes {
		changed := a.GetVersion(typ) != c.GetVersion(typ)
		if changed != (typ == resource.EndpointType) {
			t.Errorf("%s: version changed = %v after an endpoint change", typ, changed)
		}
	}
	if a.GetVersionMap(resource.EndpointType)["a"] != c.GetVersionMap(resource.EndpointType)["a"] {
		t.Error("cluster a's endpoints did not change, but their version did")
	}
	if a.GetVersionMap(resource.EndpointType)["b"] == c.GetVersionMap(resource.EndpointType)["b"] {
		t.Error("cluster b's endpoints changed, but their version did not")
	}
}

func TestPublishCountsChangedUnchangedAndInvalid(t *testing.T) {
	s := NewServer(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	f := testFixture()
	first, err := s.Publish(ctx, f.resources(t))
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Publish(ctx, f.resources(t))
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("publishing the same content replaced the snapshot")
	}
	bad := f.resources(t)
	bad.Clusters[0].(*clusterv3.Cluster).ConnectTimeout.Seconds = -1 // fails protoc-gen-validate
	if _, err := s.Publish(ctx, bad); err == nil {
		t.Error("an invalid cluster was published")
	}
	if s.Snapshot() != first {
		t.Error("a refused publication changed the snapshot")
	}
	for result, want := range map[string]float64{"changed": 1, "unchanged": 1, "invalid": 1} {
		if got := testutil.ToFloat64(s.metrics.publishes.WithLabelValues(result)); got != want {
			t.Errorf("publishes_total{result=%s} = %v, want %v", result, got, want)
		}
	}
	if got := testutil.ToFloat64(s.metrics.versions.WithLabelValues("endpoint", first.GetVersion(resource.EndpointType))); got != 1 {
		t.Errorf("snapshot_version_info for the served endpoint version = %v, want 1", got)
	}
	if got := testutil.ToFloat64(s.metrics.resources.WithLabelValues("cluster")); got != 2 {
		t.Errorf("snapshot_resources{type=cluster} = %v, want 2", got)
	}
}

// The server is ready once a snapshot is published (internal/pipeline adds
// the sources' sync for /readyz); gRPC health follows the snapshot and goes
// NOT_SERVING on shutdown; the metrics are Prometheus text from the
// server's own registry.
func TestReadinessHealthAndMetrics(t *testing.T) {
	ts := startServer(t)
	srv := httptest.NewServer(metricsEndpoints(ts.Server))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	health := healthpb.NewHealthClient(ts.dial(t))
	grpcHealth := func() healthpb.HealthCheckResponse_ServingStatus {
		resp, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetStatus()
	}

	if ts.Ready() {
		t.Error("ready before a snapshot")
	}
	if got := grpcHealth(); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("gRPC health before a snapshot = %v", got)
	}
	ts.publish(t, testFixture())
	ts.ObserveBuild(1234)
	if !ts.Ready() {
		t.Error("not ready with a snapshot")
	}
	if got := grpcHealth(); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gRPC health with a snapshot = %v", got)
	}

	_, metrics := get("/metrics")
	for _, want := range []string{
		"ingress_xds_snapshot_build_seconds_count 1",
		"ingress_xds_snapshot_publish_seconds_count 1",
		`ingress_xds_snapshot_publishes_total{result="changed"} 1`,
		`ingress_xds_snapshot_version_info{type="listener",version="` + ts.Snapshot().GetVersion(resource.ListenerType) + `"} 1`,
		`ingress_xds_snapshot_resources{type="endpoint"} 2`,
		"ingress_xds_snapshot_last_change_timestamp_seconds ",
		`ingress_xds_connected_envoys{protocol="delta"} 0`,
		`ingress_xds_pushes_total{protocol="sotw",type="route"} 0`,
		`ingress_xds_pushed_resources_total{protocol="delta",type="endpoint"} 0`,
		`ingress_xds_acks_total{protocol="sotw",type="cluster"} 0`,
		`ingress_xds_nacks_total{protocol="delta",type="secret"} 0`,
		"go_goroutines ",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	ts.stop()
	resp, err := ts.health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("gRPC health after stop = %v, %v; want NOT_SERVING", resp.GetStatus(), err)
	}
}

// Two Servers in one process keep separate metrics: nothing is global.
func TestServersDoNotShareMetrics(t *testing.T) {
	a, b := NewServer(slog.New(slog.DiscardHandler)), NewServer(slog.New(slog.DiscardHandler))
	if _, err := a.Publish(context.Background(), testFixture().resources(t)); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(b.metrics.publishes.WithLabelValues("changed")); got != 0 {
		t.Errorf("publishing on one server counted on another: %v", got)
	}
}

func TestRedactSecretRemovesAllKeyMaterial(t *testing.T) {
	secretData := func(s string) *corev3.DataSource {
		return &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: s}}
	}
	secrets := []*tlsv3.Secret{
		{Name: "cert", Type: &tlsv3.Secret_TlsCertificate{TlsCertificate: &tlsv3.TlsCertificate{
			CertificateChain: secretData("PUBLIC CERT"),
			PrivateKey:       secretData("SECRET-1"),
			Password:         secretData("SECRET-2"),
			Pkcs12:           secretData("SECRET-3"),
		}}},
		{Name: "tickets", Type: &tlsv3.Secret_SessionTicketKeys{SessionTicketKeys: &tlsv3.TlsSessionTicketKeys{
			Keys: []*corev3.DataSource{secretData("SECRET-4"), secretData("SECRET-5")},
		}}},
		{Name: "generic", Type: &tlsv3.Secret_GenericSecret{GenericSecret: &tlsv3.GenericSecret{
			Secret:  secretData("SECRET-6"),
			Secrets: map[string]*corev3.DataSource{"k": secretData("SECRET-7")},
		}}},
	}
	for _, s := range secrets {
		orig := proto.Clone(s)
		shown, err := inspectable(resource.SecretType, s)
		if err != nil {
			t.Fatal(err)
		}
		text := shown.String()
		if strings.Contains(text, "SECRET-") {
			t.Errorf("%s: key material shown: %s", s.GetName(), text)
		}
		if !strings.Contains(text, translate.Redacted) {
			t.Errorf("%s: no redaction marker: %s", s.GetName(), text)
		}
		if !proto.Equal(orig, s) {
			t.Errorf("%s: redaction changed the served secret", s.GetName())
		}
	}
	if shown, _ := inspectable(resource.SecretType, secrets[0]); !strings.Contains(shown.String(), "PUBLIC CERT") {
		t.Error("the certificate chain, which is public, was hidden")
	}
}

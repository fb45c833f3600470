package configmap

import (
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The OpenTelemetry keys as ingress-nginx's config.go defaults them
// (service "nginx", port 4317, AlwaysOn, parent-based, trusted), each
// changed, and a value that does not parse treated as unset.
func TestTracingKeys(t *testing.T) {
	tab := New(annotations.New(""))
	for _, tc := range []struct {
		name   string
		data   map[string]string
		want   *ir.Tracing
		issues []string
	}{
		{name: "no collector: no tracing", data: map[string]string{"enable-opentelemetry": "true", "otel-service-name": "edge"}},
		{name: "ingress-nginx's defaults", data: map[string]string{"otlp-collector-host": "otel.monitoring.svc"},
			want: &ir.Tracing{CollectorHost: "otel.monitoring.svc", CollectorPort: 4317, ServiceName: "nginx", Ratio: 1, ParentBased: true}},
		{name: "every key", data: map[string]string{"otlp-collector-host": "10.0.0.9", "otlp-collector-port": "14317", "otel-service-name": "edge",
			"otel-sampler": "TraceIdRatioBased", "otel-sampler-ratio": "0.25", "otel-sampler-parent-based": "false", "opentelemetry-trust-incoming-span": "false"},
			want: &ir.Tracing{CollectorHost: "10.0.0.9", CollectorPort: 14317, ServiceName: "edge", Ratio: 0.25, Untrusted: true}},
		{name: "ratio without its sampler changes nothing", data: map[string]string{"otlp-collector-host": "10.0.0.9", "otel-sampler-ratio": "0.25"},
			want: &ir.Tracing{CollectorHost: "10.0.0.9", CollectorPort: 4317, ServiceName: "nginx", Ratio: 1, ParentBased: true}},
		{name: "AlwaysOff", data: map[string]string{"otlp-collector-host": "10.0.0.9", "otel-sampler": "AlwaysOff"},
			want: &ir.Tracing{CollectorHost: "10.0.0.9", CollectorPort: 4317, ServiceName: "nginx", Ratio: 0, ParentBased: true}},
		{name: "values that do not parse", data: map[string]string{"otlp-collector-host": "10.0.0.9", "otlp-collector-port": "70000",
			"otel-sampler": "Sometimes", "otel-sampler-ratio": "1.5", "otel-service-name": " "},
			want:   &ir.Tracing{CollectorHost: "10.0.0.9", CollectorPort: 4317, ServiceName: "nginx", Ratio: 1, ParentBased: true},
			issues: []string{"otel-sampler:InvalidConfigMapValue", "otel-sampler-ratio:InvalidConfigMapValue", "otel-service-name:InvalidConfigMapValue", "otlp-collector-port:InvalidConfigMapValue"}},
		{name: "a collector that is no host", data: map[string]string{"otlp-collector-host": "http://otel:4317"},
			issues: []string{"otlp-collector-host:InvalidConfigMapValue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			if (s.Tracing == nil) != (tc.want == nil) || s.Tracing != nil && *s.Tracing != *tc.want {
				t.Errorf("tracing %+v, want %+v", s.Tracing, tc.want)
			}
			if got := reasons(s); !slices.Equal(got, tc.issues) {
				t.Errorf("issues %v (%v), want %v", got, s.Issues, tc.issues)
			}
		})
	}
}

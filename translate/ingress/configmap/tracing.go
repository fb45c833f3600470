package configmap

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// tracingKeys are the OpenTelemetry keys read (otlp-collector-host and
// the otel-* keys), until finishTracing makes the listeners' tracing of
// them. enable-opentelemetry and opentelemetry-operation-name are the
// annotations' defaults, read by their parsers.
type tracingKeys struct {
	host           string
	port           uint32
	serviceName    string
	sampler        string
	ratio          float64
	ratioSet       bool
	notParentBased bool
	untrusted      bool
}

func otlpCollectorHost(_ *Table, s *Settings, _, value string) error {
	h := strings.TrimSpace(value)
	if _, err := netip.ParseAddr(h); err != nil && len(validation.IsDNS1123Subdomain(h)) > 0 {
		return fmt.Errorf("not an IP address or a DNS name: treated as unset (no tracing)")
	}
	s.tracing.host = h
	return nil
}

func otlpCollectorPort(_ *Table, s *Settings, _, value string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("not a port: treated as unset (4317)")
	}
	s.tracing.port = uint32(n)
	return nil
}

func otelServiceName(_ *Table, s *Settings, _, value string) error {
	v := strings.TrimSpace(value)
	if v == "" || strings.IndexFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("not a name: treated as unset (nginx)")
	}
	s.tracing.serviceName = v
	return nil
}

func otelSampler(_ *Table, s *Settings, _, value string) error {
	switch v := strings.TrimSpace(value); v {
	case "AlwaysOn", "AlwaysOff", "TraceIdRatioBased":
		s.tracing.sampler = v
		return nil
	}
	return fmt.Errorf("not AlwaysOn, AlwaysOff or TraceIdRatioBased: treated as unset (AlwaysOn)")
}

func otelSamplerRatio(_ *Table, s *Settings, _, value string) error {
	r, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil || !(r >= 0 && r <= 1) {
		return fmt.Errorf("not a ratio from 0 to 1: treated as unset (0.01)")
	}
	s.tracing.ratio, s.tracing.ratioSet = r, true
	return nil
}

func otelSamplerParentBased(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (true)")
	}
	s.tracing.notParentBased = !on
	return nil
}

func trustIncomingSpan(_ *Table, s *Settings, _, value string) error {
	on, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not true or false: treated as unset (true)")
	}
	s.tracing.untrusted = !on
	return nil
}

// finishTracing makes the listeners' tracing of the keys read: nil
// without a collector, which leaves nowhere to send spans.
func (s *Settings) finishTracing() *ir.Tracing {
	k := s.tracing
	if k.host == "" {
		return nil
	}
	t := &ir.Tracing{CollectorHost: k.host, CollectorPort: k.port, ServiceName: k.serviceName, ParentBased: !k.notParentBased, Untrusted: k.untrusted, Ratio: 1}
	if t.CollectorPort == 0 {
		t.CollectorPort = 4317
	}
	if t.ServiceName == "" {
		t.ServiceName = "nginx"
	}
	switch k.sampler {
	case "AlwaysOff":
		t.Ratio = 0
	case "TraceIdRatioBased":
		t.Ratio = 0.01
		if k.ratioSet {
			t.Ratio = k.ratio
		}
	}
	return t
}

package xds

import (
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Protocol label values.
const (
	protocolSotW  = "sotw"
	protocolDelta = "delta"
)

// metrics are the server's Prometheus metrics, in a registry of its own: no
// package-level state, so two Servers in one process (tests) never collide.
type metrics struct {
	registry *prometheus.Registry

	buildSeconds    prometheus.Histogram
	publishSeconds  prometheus.Histogram
	publishes       *prometheus.CounterVec
	versions        *prometheus.GaugeVec
	resources       *prometheus.GaugeVec
	lastPublish     prometheus.Gauge
	connected       *prometheus.GaugeVec
	pushes          *prometheus.CounterVec
	pushedResources *prometheus.CounterVec
	acks            *prometheus.CounterVec
	nacks           *prometheus.CounterVec
}

func newMetrics() *metrics {
	// Rebuilds take from well under a millisecond to seconds for very large
	// clusters; these buckets cover both ends.
	buckets := prometheus.ExponentialBuckets(0.0005, 2.5, 12)
	m := &metrics{
		registry: prometheus.NewRegistry(),
		buildSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ingress_xds_snapshot_build_seconds",
			Help:    "Time to build a snapshot from cluster state: translation, validation, versioning and publication.",
			Buckets: buckets,
		}),
		publishSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ingress_xds_snapshot_publish_seconds",
			Help:    "Time to validate, version and publish translated resources to the xDS cache.",
			Buckets: buckets,
		}),
		publishes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_xds_snapshot_publishes_total",
			Help: "Snapshots offered for publication, by result: changed, unchanged (same content, nothing sent) or invalid (refused).",
		}, []string{"result"}),
		versions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ingress_xds_snapshot_version_info",
			Help: "The version served for each resource type (always 1; the version is a label).",
		}, []string{"type", "version"}),
		resources: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ingress_xds_snapshot_resources",
			Help: "Resources in the served snapshot, by type.",
		}, []string{"type"}),
		lastPublish: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ingress_xds_snapshot_last_change_timestamp_seconds",
			Help: "When the served snapshot last changed, in seconds since the epoch.",
		}),
		connected: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "ingress_xds_connected_envoys",
			Help: "Open xDS streams, by protocol (one per Envoy with ADS).",
		}, []string{"protocol"}),
		pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_xds_pushes_total",
			Help: "Discovery responses sent, by resource type and protocol.",
		}, []string{"type", "protocol"}),
		pushedResources: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_xds_pushed_resources_total",
			Help: "Resources sent in discovery responses, by resource type and protocol; delta sends only what changed.",
		}, []string{"type", "protocol"}),
		acks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_xds_acks_total",
			Help: "Responses Envoys accepted, by resource type and protocol.",
		}, []string{"type", "protocol"}),
		nacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ingress_xds_nacks_total",
			Help: "Responses Envoys rejected, by resource type and protocol.",
		}, []string{"type", "protocol"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.buildSeconds, m.publishSeconds, m.publishes, m.versions, m.resources, m.lastPublish,
		m.connected, m.pushes, m.pushedResources, m.acks, m.nacks,
	)
	// Show every series from the start, at zero, so that rates and alerts
	// work before the first event.
	for _, p := range []string{protocolSotW, protocolDelta} {
		m.connected.WithLabelValues(p)
		for _, t := range servedTypes {
			name := typeName(t)
			m.pushes.WithLabelValues(name, p)
			m.pushedResources.WithLabelValues(name, p)
			m.acks.WithLabelValues(name, p)
			m.nacks.WithLabelValues(name, p)
		}
	}
	for _, r := range []string{"changed", "unchanged", "invalid"} {
		m.publishes.WithLabelValues(r)
	}
	return m
}

// countWaiting shows how many SotW streams, or their load assignments,
// wait for a place in a's budget (admission.go).
func (m *metrics) countWaiting(a *sotwAdmission) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ingress_xds_sotw_streams_waiting",
		Help: "State-of-the-world streams, or their load assignments, waiting for a place in the budget of what Envoys are expected to send at once (serve --xds-sotw-budget).",
	}, func() float64 {
		_, waiting := a.state()
		return float64(waiting)
	}))
}

// published shows a new snapshot: its versions, its size and when.
func (m *metrics) published(snap *Snapshot, counts map[string]int, at time.Time) {
	m.versions.Reset()
	for _, t := range servedTypes {
		m.versions.WithLabelValues(typeName(t), snap.GetVersion(t)).Set(1)
		m.resources.WithLabelValues(typeName(t)).Set(float64(counts[t]))
	}
	m.lastPublish.Set(float64(at.UnixNano()) / 1e9)
}

// servedTypes are the resource types a snapshot holds, in dependency order.
var servedTypes = []string{
	resource.ListenerType, resource.ScopedRouteType, resource.RouteType, resource.VirtualHostType, resource.ClusterType, resource.EndpointType, resource.SecretType,
}

// typeName is a short, bounded label for a type URL: Envoys choose the type
// URLs they ask for, and an unbounded label would let one grow the metrics
// without limit.
func typeName(typeURL string) string {
	switch typeURL {
	case resource.ListenerType:
		return "listener"
	case resource.RouteType:
		return "route"
	case resource.VirtualHostType: // vhds.go
		return "virtual_host"
	case resource.ScopedRouteType: // scopes.go
		return "scoped_route"
	case resource.ClusterType:
		return "cluster"
	case resource.EndpointType:
		return "endpoint"
	case resource.SecretType:
		return "secret"
	default:
		return "other"
	}
}

// typeURLOf accepts a short name or a type URL and returns the type URL.
func typeURLOf(name string) (string, bool) {
	for _, t := range servedTypes {
		if name == t || name == typeName(t) {
			return t, true
		}
	}
	return "", false
}

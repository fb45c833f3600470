// Package pipeline is the control plane's one-way path: source state ->
// translation -> published snapshot, with the problems found reported to
// the people who can fix them, and the process-wide HTTP endpoints
// (/healthz, /readyz, /metrics) that say how it is doing.
package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/prometheus/client_golang/prometheus"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/xds"
)

// EventRecorder records a Warning Event on an object; kube.EventReporter
// is the one serve uses in cluster mode.
type EventRecorder interface {
	Warn(obj runtime.Object, reason, message string)
}

// Pipeline rebuilds the snapshot from the source. Rebuild may be called
// from several goroutines (serve has one lane for endpoint changes and one
// for everything else); rebuilds run one at a time.
type Pipeline struct {
	log        *slog.Logger
	source     kube.Source
	translator *translate.Translator
	server     *xds.Server
	events     EventRecorder // nil: problems are only logged

	published    atomic.Bool
	firstPublish chan struct{} // closed by the first publish
	mu           sync.Mutex    // serializes rebuilds
	lastProblems map[translate.Problem]bool
	// metrics are the pipeline's own (configmap.go), beside the server's.
	metrics   *prometheus.Registry
	configMap *configMapWatch // nil: no --configmap
	invalid   *invalidIR      // validate.go
	observer  Observer        // nil: none (observer.go)
	// gatewayStatus is handed each full build's Gateway API status.
	gatewayStatus GatewayStatusSink
}

// GatewayStatusSink takes the Gateway API status of each build:
// kube.GatewayStatusWriter, which writes it while leading.
type GatewayStatusSink interface {
	Update(kube.GatewayStatuses)
}

// Options are what a Pipeline is made of.
type Options struct {
	Logger     *slog.Logger
	Source     kube.Source
	Translator *translate.Translator
	Server     *xds.Server
	// Events, when set, also records each problem with an Ingress as a
	// Warning Event on it (cluster mode; files have nowhere to put one).
	Events EventRecorder
	// ConfigMap is the controller ConfigMap (serve --configmap; empty:
	// none), whose absence is logged and on the metrics (configmap.go).
	ConfigMap types.NamespacedName
	// Observer, when set, is told of each publish (observer.go).
	Observer Observer
	// GatewayStatus, when set, is handed the Gateway API status of each
	// full build once it is published (cluster mode with the CRDs).
	GatewayStatus GatewayStatusSink
}

// New returns a Pipeline that has published nothing yet.
func New(o Options) *Pipeline {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	p := &Pipeline{log: logger, source: o.Source, translator: o.Translator, server: o.Server, events: o.Events,
		observer: o.Observer, gatewayStatus: o.GatewayStatus, firstPublish: make(chan struct{}), metrics: prometheus.NewRegistry()}
	p.invalid = newInvalidIR(p.metrics)
	if o.ConfigMap.Name != "" {
		p.configMap = newConfigMapWatch(o.ConfigMap)
	}
	return p
}

// Gatherer is the pipeline's own metrics, for /metrics beside the
// server's.
func (p *Pipeline) Gatherer() prometheus.Gatherer { return p.metrics }

// Published is closed once the first snapshot is published: serve holds
// the status writes back until then (kube.StatusWriter.Hold).
func (p *Pipeline) Published() <-chan struct{} { return p.firstPublish }

// Ready reports whether a snapshot has been published. The source calls
// for the first rebuild only once its caches are whole, so this also means
// the source has synced: an Envoy connecting now gets real configuration,
// never an empty one.
func (p *Pipeline) Ready() bool {
	return p.published.Load() && p.server.Ready()
}

// Rebuild takes what changed in the source and publishes a new snapshot: a
// change to endpoints alone updates only the load assignments (the fast
// path), anything else translates the whole state again. A failure keeps
// the previous snapshot, which Envoys go on running.
func (p *Pipeline) Rebuild(ctx context.Context) {
	// Both lanes build here, one at a time: each takes whatever changed.
	p.mu.Lock()
	defer p.mu.Unlock()
	start := time.Now()
	changes := p.source.TakeChanges()
	var res *translate.Result
	path := "full"
	if !changes.All {
		if len(changes.Endpoints) == 0 {
			return
		}
		// Only endpoints changed: listeners, routes and clusters cannot have.
		slices := make(map[types.NamespacedName][]*kube.EndpointSlice, len(changes.Endpoints))
		for svc := range changes.Endpoints {
			slices[svc] = p.source.EndpointSlices(svc)
		}
		if fast, ok := p.translator.UpdateEndpoints(slices); ok {
			res, path = fast, "endpoints"
		}
	}
	var marks buildMarks // zero on the fast path
	if res == nil {
		st := p.source.State()
		marks.state = time.Now()
		var err error
		res, err = p.translator.Translate(st)
		marks.translated = time.Now()
		if err != nil {
			p.log.Error("translation failed; keeping the previous snapshot", "err", err)
			return
		}
		if res.Invalid != nil {
			p.invalid.report(p.log, res.Invalid)
		}
		p.reportProblems(st, res.Problems)
		if p.configMap != nil {
			p.configMap.observe(p.log, st, p.metrics)
		}
	}
	marks.publishing = time.Now()
	snap, err := p.server.Publish(ctx, res.Resources)
	if err != nil {
		p.log.Error("publishing failed; keeping the previous snapshot", "err", err)
		return
	}
	if p.gatewayStatus != nil && path == "full" {
		// What is published is what the status says: handed over before
		// the first publish is announced, so that a held writer finds it.
		p.gatewayStatus.Update(gatewayStatuses(res.GatewayStatus))
	}
	if !p.published.Swap(true) {
		close(p.firstPublish)
	}
	p.server.ObserveBuild(time.Since(start))
	p.observe(res, path == "full", snap) // observer.go
	r := res.Resources
	p.log.Info("published snapshot", "path", path,
		"listeners", len(r.Listeners), "virtualHosts", len(r.Routes[0].GetVirtualHosts())+len(r.VirtualHosts), "clusters", len(r.Clusters),
		"routeVersion", snap.GetVersion(resource.RouteType), "endpointVersion", snap.GetVersion(resource.EndpointType),
		"took", time.Since(start).Round(time.Microsecond), marks.attr(start, p.server))
}

// gatewayStatuses is the front-end's status as kube's plain type: the
// same maps (the writer finds an unchanged status by their identity);
// none at all when the State held no Gateway API object.
func gatewayStatuses(s *gatewayapi.Status) kube.GatewayStatuses {
	if s == nil {
		return kube.GatewayStatuses{}
	}
	return kube.GatewayStatuses{Gateways: s.Gateways, HTTPRoutes: s.HTTPRoutes, GRPCRoutes: s.GRPCRoutes, TLSRoutes: s.TLSRoutes, BackendTLSPolicies: s.BackendTLSPolicies,
		HTTPRoutesSince: s.HTTPRoutesSince, HTTPRoutesChanged: s.HTTPRoutesChanged, OwnPorts: s.OwnPorts}
}

// reportProblems logs each problem once, when it first appears, rather than
// on every rebuild, and when there is an event recorder records it as an
// Event on the Ingress. A problem that goes away and comes back is new
// again.
func (p *Pipeline) reportProblems(st *kube.State, problems []translate.Problem) {
	current := make(map[translate.Problem]bool, len(problems))
	var byName map[types.NamespacedName]*networkingv1.Ingress
	for _, pr := range problems {
		current[pr] = true
		if p.lastProblems[pr] {
			continue
		}
		p.log.Warn("problem with "+strings.ToLower(pr.Kind), "object", pr.Namespace+"/"+pr.Name, "reason", pr.Reason, "message", pr.Message)
		if p.events != nil && pr.Kind == "ConfigMap" { // the controller ConfigMap's (--configmap)
			if cm := st.ConfigMaps[types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}]; cm != nil {
				p.events.Warn(cm, pr.Reason, pr.Message)
			}
			continue
		}
		if p.events == nil || pr.Kind != "Ingress" {
			continue
		}
		if byName == nil {
			byName = make(map[types.NamespacedName]*networkingv1.Ingress, len(st.Ingresses))
			for _, ing := range st.Ingresses {
				byName[types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}] = ing
			}
		}
		if ing := byName[types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}]; ing != nil {
			p.events.Warn(ing, pr.Reason, pr.Message)
		}
	}
	p.lastProblems = current
}

package pipeline

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

// configMapWatch tells the operator whether the controller ConfigMap
// (serve --configmap) is there. A missing one is no error (ingress-nginx,
// too, starts without its ConfigMap, with its defaults), but a misspelt
// name would otherwise go unnoticed: no object to put an Event on, and
// every key silently at its default. So its absence is logged when found
// and when it ends, and the gauge says it at any time. kube watches the
// ConfigMap by name while some owned Ingress refers to it, so it is
// applied the moment it appears; with no Ingress it is not read, and
// nothing is said.
type configMapWatch struct {
	name  types.NamespacedName
	found prometheus.Gauge
	// known is set once a State with an Ingress has said found or not.
	known, present bool
}

func newConfigMapWatch(name types.NamespacedName) *configMapWatch {
	return &configMapWatch{name: name, found: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ingress_xds_controller_configmap_found",
		Help: "Whether the controller ConfigMap (serve --configmap, the label) is found: 1, or 0 while it is not (its keys then apply as unset). " +
			"Absent until an owned Ingress makes it read.",
		ConstLabels: prometheus.Labels{"configmap": name.String()},
	})}
}

// observe reads the ConfigMap's presence from a State and reports a
// change of it.
func (w *configMapWatch) observe(log *slog.Logger, st *kube.State, reg *prometheus.Registry) {
	if len(st.Ingresses) == 0 {
		return // not referred to, so not read: unknown
	}
	present := st.ConfigMaps[w.name] != nil
	if w.known && present == w.present {
		return
	}
	if !w.known {
		reg.MustRegister(w.found)
	}
	switch {
	case !present:
		log.Warn("the controller ConfigMap is not found: its keys are unset (ingress-xds's defaults, or ingress-nginx's with --nginx-defaults) until it appears, "+
			"which is then applied without a restart", "configmap", w.name.String())
		w.found.Set(0)
	case w.known:
		log.Info("the controller ConfigMap is found: its keys apply", "configmap", w.name.String())
		w.found.Set(1)
	default:
		w.found.Set(1)
	}
	w.known, w.present = true, present
}

package pipeline

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-xds/ingress-xds/kube"
)

// The controller ConfigMap's presence is said once per change, and only
// once some Ingress makes it read: with none, kube does not watch it, so
// its absence from the State says nothing.
func TestConfigMapWatch(t *testing.T) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	reg := prometheus.NewRegistry()
	w := newConfigMapWatch(name)
	state := func(ingresses int, present bool) *kube.State {
		st := kube.NewState()
		for range ingresses {
			st.Ingresses = append(st.Ingresses, &networkingv1.Ingress{})
		}
		if present {
			st.ConfigMaps[name] = &corev1.ConfigMap{}
		}
		return st
	}
	w.observe(log, state(0, false), reg)
	if n, _ := testutil.GatherAndCount(reg); n != 0 || logs.Len() != 0 {
		t.Fatalf("no Ingress: %d metrics, log %q; want nothing said", n, logs.String())
	}
	for i, c := range []struct {
		ingresses int
		present   bool
		gauge     float64
		logged    string // "" when nothing new is logged
	}{
		{1, false, 0, "the controller ConfigMap is not found"},
		{2, false, 0, ""},
		{0, true, 0, ""}, // not read: unknown, the last word stands
		{1, true, 1, "the controller ConfigMap is found"},
		{1, true, 1, ""},
		{1, false, 0, "the controller ConfigMap is not found"},
	} {
		logs.Reset()
		w.observe(log, state(c.ingresses, c.present), reg)
		if got := testutil.ToFloat64(w.found); got != c.gauge {
			t.Errorf("step %d: gauge %v, want %v", i, got, c.gauge)
		}
		if c.logged == "" && logs.Len() != 0 || c.logged != "" && (!strings.Contains(logs.String(), c.logged) || !strings.Contains(logs.String(), name.String())) {
			t.Errorf("step %d: logged %q, want %q", i, logs.String(), c.logged)
		}
	}
}

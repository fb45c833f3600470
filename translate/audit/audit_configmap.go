package audit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// noConfigMapNote is what the audit says without --configmap.
const noConfigMapNote = "ingress-nginx's controller ConfigMap is not read (no --configmap): none of its keys applies, " +
	"and ingress-nginx's defaults that differ from Envoy's (ssl-redirect on, a 1m body limit, 60 s read and send timeouts, " +
	"HSTS) do not either"

// ConfigMapKey is one key of the controller ConfigMap, with its verdict
// (docs/configmap.md) and the front-end's problems with its value.
type ConfigMapKey struct {
	Key      string              `json:"key"`
	Verdict  annotations.Verdict `json:"verdict"`
	Note     string              `json:"note,omitempty"`
	Problems []Problem           `json:"problems,omitempty"`
}

// configMapAudit says what becomes of the controller ConfigMap's keys:
// each with its verdict from the ConfigMap table, and the problems the
// front-end reported on it (problems holds the model's, by object).
func configMapAudit(st *kube.State, opts ingress.Options, reg *annotations.Registry, problems map[ir.Object][]Problem) (string, []ConfigMapKey) {
	name := opts.ConfigMap
	if name.Name == "" && opts.NginxDefaults {
		return "ingress-nginx's controller ConfigMap is not read (no --configmap); --nginx-defaults gives every Ingress ingress-nginx's defaults (docs/configmap.md)", nil
	}
	if name.Name == "" {
		return noConfigMapNote, nil
	}
	cm := st.ConfigMaps[name]
	if cm == nil {
		return fmt.Sprintf("the controller ConfigMap %s (--configmap) is not found: none of its keys applies", name), nil
	}
	table := configmap.New(reg)
	var out []ConfigMapKey
	own := problems[ir.Object{Kind: "ConfigMap", Namespace: name.Namespace, Name: name.Name}]
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		v, note := table.Verdict(key)
		k := ConfigMapKey{Key: key, Verdict: v, Note: note}
		for _, p := range own {
			if strings.HasPrefix(p.Message, key+"=") || strings.HasPrefix(p.Message, key+":") {
				k.Problems = append(k.Problems, Problem{Reason: p.Reason, Message: p.Message})
			}
		}
		out = append(out, k)
	}
	return fmt.Sprintf("the controller ConfigMap %s is read: each key below has its verdict (docs/configmap.md)", name), out
}

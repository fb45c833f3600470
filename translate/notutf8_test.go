package translate_test

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// TestNotUTF8 gives every key of the controller ConfigMap, and every
// annotation, values holding bytes that are not UTF-8, which a client of
// the API server's protobuf can write: Envoy's configuration is protobuf,
// whose strings must be UTF-8, so such a value that reached a resource
// would fail the whole translation, every Ingress's. Each is reported and
// treated as unset or refused instead; an access control (block-*)
// refuses every Ingress, never serves them without it.
func TestNotUTF8(t *testing.T) {
	base, err := kube.LoadStateWith(filepath.Join("testdata", "configmap-connections.yaml"), kube.ClassFilter{WatchClassless: true}, goldenReferences)
	if err != nil {
		t.Fatal(err)
	}
	cm := base.ConfigMaps[goldenOptions.ConfigMap]
	check := func(t *testing.T, what string, st *kube.State) *translate.Result {
		t.Helper()
		res, err := translate.Translate(st, goldenOptions)
		if err != nil {
			t.Fatalf("%s: translate: %v", what, err)
		}
		if err := res.IR().Validate(); err != nil {
			t.Fatalf("%s: the IR breaks its contract: %v", what, err)
		}
		if err := xds.Validate(res.Resources); err != nil {
			t.Fatalf("%s: invalid resources: %v", what, err)
		}
		return res
	}
	for _, v := range []string{"\x80", "a\xffb", "$remote_addr \x80", "X-A: \xc3\x28", "~*bot\xfe"} {
		for _, k := range configmap.New(annotations.New("")).Keys() {
			st := *base
			st.ConfigMaps = maps.Clone(base.ConfigMaps)
			c := cm.DeepCopy()
			c.Data[k.Name] = v
			st.ConfigMaps[goldenOptions.ConfigMap] = c
			res := check(t, "ConfigMap "+k.Name+"="+strings.ToValidUTF8(v, "?"), &st)
			if k.Name == "block-user-agents" || k.Name == "block-referers" {
				for _, vh := range res.IR().VirtualHosts {
					for _, r := range vh.Routes {
						if d := r.Action.Direct; d == nil || d.Status != 503 {
							t.Errorf("%s=%q: %s%s is served, want every Ingress refused", k.Name, v, vh.Host, describeMatch(r))
						}
					}
				}
			}
		}
		for _, k := range annotations.New("").Keys() {
			st := *base
			st.Ingresses = nil
			for _, ing := range base.Ingresses {
				c := ing.DeepCopy()
				if c.Annotations == nil {
					c.Annotations = map[string]string{}
				}
				c.Annotations[k] = v
				st.Ingresses = append(st.Ingresses, c)
			}
			check(t, "annotation "+k+"="+strings.ToValidUTF8(v, "?"), &st)
		}
	}
}

func describeMatch(r *ir.Route) string { return r.Match.Path }

package translate_test

import (
	"maps"
	"path/filepath"
	"testing"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
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
	values := []string{"\x80", "a\xffb", "$remote_addr \x80", "X-A: \xc3\x28", "~*bot\xfe"}
	for _, k := range configmap.New(annotations.New("")).Keys() {
		t.Run("ConfigMap/"+k.Name, func(t *testing.T) {
			for _, v := range values {
				st := *base
				st.ConfigMaps = maps.Clone(base.ConfigMaps)
				c := cm.DeepCopy()
				c.Data[k.Name] = v
				st.ConfigMaps[goldenOptions.ConfigMap] = c
				res := translateChecked(t, &st, goldenOptions)
				if k.Name != "block-user-agents" && k.Name != "block-referers" {
					continue
				}
				for _, vh := range res.IR().VirtualHosts {
					for _, r := range vh.Routes {
						if d := r.Action.Direct; d == nil || d.Status != 503 {
							t.Errorf("%q: %s%s is served, want every Ingress refused", v, vh.Host, r.Match.Path)
						}
					}
				}
			}
		})
	}
	for _, k := range annotations.New("").Keys() {
		t.Run("annotation/"+k, func(t *testing.T) {
			for _, v := range values {
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
				translateChecked(t, &st, goldenOptions)
			}
		})
	}
}

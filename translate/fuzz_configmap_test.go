package translate_test

import (
	"maps"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
)

// FuzzConfigMap gives the controller ConfigMap of a golden case (plain
// and TLS Ingresses, a gRPC backend, a certificate) three known keys
// with arbitrary values and checks the invariants of bad input: no
// panic, an IR that keeps its contract, resources that validate and make
// a consistent snapshot. A ConfigMap is the operator's, but a typo in it
// must not take the control plane down or hand Envoy what it rejects.
// `go test -fuzz FuzzConfigMap ./translate` explores.
func FuzzConfigMap(f *testing.F) {
	f.Add(uint8(0), "true", uint8(1), "10x", uint8(2), "")
	f.Add(uint8(3), "\r\nX-Injected: 1", uint8(7), "-1", uint8(9), "$host")
	f.Add(uint8(5), "(?=x)", uint8(9), "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v", uint8(11), "::")
	f.Add(uint8(13), "location / { return 200; }", uint8(17), "1h30m", uint8(19), "0.0.0.0/0, ::/0")
	keys := configmap.New(annotations.New("")).Keys()
	base, err := kube.LoadStateWith(filepath.Join("testdata", "configmap-connections.yaml"), kube.ClassFilter{WatchClassless: true}, goldenReferences)
	if err != nil {
		f.Fatal(err)
	}
	cm := base.ConfigMaps[goldenOptions.ConfigMap]
	if cm == nil {
		f.Fatal("the case has no controller ConfigMap")
	}
	f.Fuzz(func(t *testing.T, k1 uint8, v1 string, k2 uint8, v2 string, k3 uint8, v3 string) {
		data := maps.Clone(cm.Data)
		for _, kv := range []struct {
			k uint8
			v string
		}{{k1, v1}, {k2, v2}, {k3, v3}} {
			data[keys[int(kv.k)%len(keys)].Name] = kv.v
		}
		st := *base
		st.ConfigMaps = maps.Clone(base.ConfigMaps)
		st.ConfigMaps[goldenOptions.ConfigMap] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}, Data: data}
		translateChecked(t, &st, goldenOptions)
	})
}

package translate_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate"
)

// BenchmarkTranslateConfigMapChange is the controller ConfigMap edited
// (its proxy-body-size) in a warm Translator: every Ingress's fragment read
// it, so every one is built again; and, for comparison, one Ingress edited
// with the ConfigMap there (the steady-state cost, which the ConfigMap
// must not raise).
func BenchmarkTranslateConfigMapChange(b *testing.B) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	opts := translate.Options{HTTPPort: 8080, HTTPSPort: 8443, ConfigMap: name}
	configMap := func(i int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name.Name, Namespace: name.Namespace},
			Data: map[string]string{"proxy-body-size": fmt.Sprintf("%dk", 1+i%1000), "proxy-read-timeout": "60", "ssl-redirect": "true"}}
	}
	for _, n := range benchSizes {
		st := benchState(n)
		st.ConfigMaps = map[types.NamespacedName]*corev1.ConfigMap{name: configMap(0)}
		tr := translate.NewTranslator(opts)
		if _, err := tr.Translate(st); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("configmap/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				// A source hands over a new map when an object in it changed.
				st.ConfigMaps = maps.Clone(st.ConfigMaps)
				st.ConfigMaps[name] = configMap(i + 1)
				if _, err := tr.Translate(st); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("ingress/%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				j := i % n
				ing := st.Ingresses[j].DeepCopy()
				ing.Spec.Rules[0].Host = fmt.Sprintf("changed-%d.example.com", i)
				b.StopTimer()
				st.Ingresses = slices.Clone(st.Ingresses)
				b.StartTimer()
				st.Ingresses[j] = ing
				if _, err := tr.Translate(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package translate_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// benchState is the workload: n Ingresses, each with 2 hosts x 5
// Prefix paths, each path to its own Service, each Service with one
// EndpointSlice of 10 ready endpoints.
func benchState(n int) *kube.State {
	st := kube.NewState()
	prefix := networkingv1.PathTypePrefix
	ready := true
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("ns-%d", i%100)
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ing-%d", i), Namespace: ns}}
		svc := 0
		for h := 0; h < 2; h++ {
			rule := networkingv1.IngressRule{Host: fmt.Sprintf("h%d-%d.example.com", h, i)}
			rule.HTTP = &networkingv1.HTTPIngressRuleValue{}
			for p := 0; p < 5; p++ {
				name := fmt.Sprintf("svc-%d-%d", i, svc)
				svc++
				rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{
					Path: fmt.Sprintf("/path-%d", p), PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: name, Port: networkingv1.ServiceBackendPort{Number: 80},
					}},
				})
				key := types.NamespacedName{Namespace: ns, Name: name}
				st.Services[key] = kube.NewService(&corev1.Service{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
					Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}},
				})
				port := int32(8080)
				slice := &discoveryv1.EndpointSlice{
					ObjectMeta:  metav1.ObjectMeta{Name: name + "-abc", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: name}},
					AddressType: discoveryv1.AddressTypeIPv4,
					Ports:       []discoveryv1.EndpointPort{{Port: &port}},
				}
				for e := 0; e < 10; e++ {
					slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{
						Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", (i/250)%250, i%250, svc*10+e)},
						Conditions: discoveryv1.EndpointConditions{Ready: &ready},
					})
				}
				st.EndpointSlices[key] = []*kube.EndpointSlice{kube.NewEndpointSlice(slice)}
			}
			ing.Spec.Rules = append(ing.Spec.Rules, rule)
		}
		st.Ingresses = append(st.Ingresses, ing)
	}
	return st
}

// BenchmarkTranslateFull is a translation from nothing: start-up.
func BenchmarkTranslateFull(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := benchState(n)
			opts := translate.Options{HTTPPort: 8080, HTTPSPort: 8443}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := translate.Translate(st, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchSizes are the three scales.
var benchSizes = []int{100, 1000, 10000}

// warmTranslator is a Translator that has translated benchState(n) once.
func warmTranslator(b *testing.B, n int) (*kube.State, *translate.Translator) {
	b.Helper()
	st := benchState(n)
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	if _, err := tr.Translate(st); err != nil {
		b.Fatal(err)
	}
	return st, tr
}

// changeEndpoints replaces one endpoint of the first Service, as an
// informer would: a new EndpointSlice object.
func changeEndpoints(st *kube.State, i int) map[types.NamespacedName][]*kube.EndpointSlice {
	key := types.NamespacedName{Namespace: "ns-0", Name: "svc-0-0"}
	s := *st.EndpointSlices[key][0]
	s.Ready = append(s.Ready[:9:9], fmt.Sprintf("10.200.%d.%d", i/250%250, i%250))
	st.EndpointSlices[key] = []*kube.EndpointSlice{&s}
	return map[types.NamespacedName][]*kube.EndpointSlice{key: st.EndpointSlices[key]}
}

// BenchmarkTranslateIngressChange is one Ingress edited in a warm
// Translator: the steady-state cost of a change.
func BenchmarkTranslateIngressChange(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, tr := warmTranslator(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % n
				ing := st.Ingresses[j].DeepCopy()
				ing.Spec.Rules[0].Host = fmt.Sprintf("changed-%d.example.com", i)
				// A source hands over a new list when an Ingress changed
				// (see kube.State); the copy is the source's cost.
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

// BenchmarkTranslateEndpointChange is one EndpointSlice changed in a warm
// Translator, through a full translation.
func BenchmarkTranslateEndpointChange(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, tr := warmTranslator(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A source hands over a new map for a part that changed
				// (the cluster source lists it again); that copy is the
				// source's cost, not the translator's.
				b.StopTimer()
				st.EndpointSlices = maps.Clone(st.EndpointSlices)
				b.StartTimer()
				changeEndpoints(st, i)
				if _, err := tr.Translate(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTranslateEndpointFastPath is one EndpointSlice changed, through
// the endpoint fast path (what serve does for changes to endpoints alone).
func BenchmarkTranslateEndpointFastPath(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st, tr := warmTranslator(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, ok := tr.UpdateEndpoints(changeEndpoints(st, i)); !ok {
					b.Fatal("no fast path")
				}
			}
		})
	}
}

// BenchmarkValidate is the IR contract's check (ir.(*IR).Validate) of a
// full translation's IR, to set against BenchmarkTranslateIngressChange:
// the pipeline runs it on every full translation (translate.Translator).
func BenchmarkValidate(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			res, err := translate.Translate(benchState(n), translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
			if err != nil {
				b.Fatal(err)
			}
			m := res.IR()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := m.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

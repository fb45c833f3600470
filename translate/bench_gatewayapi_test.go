package translate_test

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// benchGatewayState is the Ingress benchmarks' workload as Gateway API:
// the same Services and EndpointSlices (benchState), and instead of each
// Ingress an HTTPRoute with its 2 hostnames and 5 PathPrefix rules, each
// to its own Service, attached to one Gateway's HTTP listener.
func benchGatewayState(n int) *kube.State {
	st := benchState(n)
	all := gwapiv1.NamespacesFromAll
	g := &kube.GatewayObjects{
		GatewayClasses: []*gwapiv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "ingress-xds"},
			Spec: gwapiv1.GatewayClassSpec{ControllerName: "ingress-xds.io/gateway-controller"}}},
		Gateways: []*gwapiv1.Gateway{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "infra"},
			Spec: gwapiv1.GatewaySpec{GatewayClassName: "ingress-xds", Listeners: []gwapiv1.Listener{{
				Name: "http", Port: 8080, Protocol: gwapiv1.HTTPProtocolType,
				AllowedRoutes: &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{From: &all}},
			}}}}},
	}
	gwNamespace := gwapiv1.Namespace("infra")
	for _, ing := range st.Ingresses {
		r := &gwapiv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: ing.Name, Namespace: ing.Namespace}}
		r.Spec.ParentRefs = []gwapiv1.ParentReference{{Name: "web", Namespace: &gwNamespace}}
		for _, rule := range ing.Spec.Rules {
			r.Spec.Hostnames = append(r.Spec.Hostnames, gwapiv1.Hostname(rule.Host))
		}
		// The Ingress's paths are the same for both its hosts.
		for _, p := range ing.Spec.Rules[0].HTTP.Paths {
			prefix, value := gwapiv1.PathMatchPathPrefix, p.Path
			port := gwapiv1.PortNumber(80)
			r.Spec.Rules = append(r.Spec.Rules, gwapiv1.HTTPRouteRule{
				Matches:     []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &prefix, Value: &value}}},
				BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{Name: gwapiv1.ObjectName(p.Backend.Service.Name), Port: &port}}}},
			})
		}
		g.HTTPRoutes = append(g.HTTPRoutes, r)
	}
	st.Ingresses = nil
	st.Gateway = g
	return st
}

// BenchmarkTranslateGatewayFull is a translation of n HTTPRoutes from
// nothing: start-up.
func BenchmarkTranslateGatewayFull(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := benchGatewayState(n)
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

// BenchmarkTranslateHTTPRouteChange is one HTTPRoute edited in a warm
// Translator: what a Route change costs while the Gateway API front-end
// rebuilds its IR whole (gatewayapi.Builder).
func BenchmarkTranslateHTTPRouteChange(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			st := benchGatewayState(n)
			tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
			if _, err := tr.Translate(st); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % n
				next := *st.Gateway
				next.HTTPRoutes = slices.Clone(next.HTTPRoutes)
				r := next.HTTPRoutes[j].DeepCopy()
				r.Spec.Hostnames[0] = gwapiv1.Hostname(fmt.Sprintf("changed-%d.example.com", i))
				next.HTTPRoutes[j] = r
				st.Gateway = &next
				if _, err := tr.Translate(st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package ingress_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func configTestIngress(name string, annotations map[string]string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Annotations: annotations},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: name + ".example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
}

func irJSON(t *testing.T, m *ir.IR) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bodyLimit is the body bound of host's first route, 0 for none.
func bodyLimit(m *ir.IR, host string) int64 {
	for _, vh := range m.VirtualHosts {
		if vh.Host == host && len(vh.Routes) > 0 {
			if p := vh.Routes[0].Policy; p != nil && p.RequestBody != nil {
				return int64(p.RequestBody.MaxBytes)
			}
			return 0
		}
	}
	return -1
}

// A change of the controller ConfigMap alone (the Ingresses the same
// objects) gives what a new Builder gives: the fragments that read it are
// built again, and only the Ingresses that do not set a key get its
// value.
func TestControllerConfigMapChangeRebuilds(t *testing.T) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	opts := ingress.Options{HTTPPort: 8080, ConfigMap: name}
	st := kube.NewState()
	st.Ingresses = []*networkingv1.Ingress{
		configTestIngress("own", map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "8k"}),
		configTestIngress("plain", nil),
	}
	b := ingress.NewBuilder(opts)
	first := b.Build(st)
	if got := bodyLimit(first, "plain.example.com"); got != 0 {
		t.Fatalf("no ConfigMap: plain's body limit %d", got)
	}
	for i, data := range []map[string]string{{"proxy-body-size": "1k"}, {"proxy-body-size": "2k", "use-gzip": "true", "enable-ocsp": "true"}, {"proxy-body-size": "oops"}, nil} {
		next := *st
		next.ConfigMaps = map[types.NamespacedName]*corev1.ConfigMap{}
		if data != nil {
			next.ConfigMaps[name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name.Name, Namespace: name.Namespace}, Data: data}
		}
		got := b.Build(&next)
		want := ingress.NewBuilder(opts).Build(&next)
		if irJSON(t, got) != irJSON(t, want) {
			t.Errorf("change %d: the Builder's IR differs from a new Builder's:\n got %s\nwant %s", i, irJSON(t, got), irJSON(t, want))
		}
		wantLimit := map[int]int64{0: 1 << 10, 1: 2 << 10, 2: 0, 3: 0}[i]
		if l := bodyLimit(got, "plain.example.com"); l != wantLimit {
			t.Errorf("change %d: plain's body limit %d, want %d", i, l, wantLimit)
		}
		if l := bodyLimit(got, "own.example.com"); l != 8<<10 {
			t.Errorf("change %d: own's body limit %d, want its annotation's 8k", i, l)
		}
		problems := 0
		for _, p := range got.Problems {
			if p.Kind == "ConfigMap" {
				problems++
			}
		}
		if wantProblems := map[int]int{0: 0, 1: 1, 2: 1, 3: 0}[i]; problems != wantProblems {
			t.Errorf("change %d: %d problems on the ConfigMap, want %d: %+v", i, problems, wantProblems, got.Problems)
		}
	}
}

// --nginx-defaults: ingress-nginx's defaults apply without a ConfigMap,
// under the ConfigMap's keys, and under an Ingress's annotations.
func TestNginxDefaults(t *testing.T) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	st := kube.NewState()
	st.Ingresses = []*networkingv1.Ingress{
		configTestIngress("own", map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "8k"}),
		configTestIngress("plain", nil),
	}
	m := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, NginxDefaults: true}).Build(st)
	if got, own := bodyLimit(m, "plain.example.com"), bodyLimit(m, "own.example.com"); got != 1<<20 || own != 8<<10 {
		t.Errorf("without a ConfigMap: plain's body limit %d, own's %d; want 1m and 8k", got, own)
	}
	if p := m.VirtualHosts[1].Routes[0].Policy; p == nil || p.Timeouts == nil || p.Timeouts.Idle != ir.Duration(60e9) {
		t.Errorf("plain's timeouts: %+v, want 60 s between reads", p)
	}
	st.ConfigMaps[name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name.Name, Namespace: name.Namespace}, Data: map[string]string{"proxy-body-size": "2k"}}
	m = ingress.NewBuilder(ingress.Options{HTTPPort: 8080, NginxDefaults: true, ConfigMap: name}).Build(st)
	if got := bodyLimit(m, "plain.example.com"); got != 2<<10 {
		t.Errorf("the ConfigMap's proxy-body-size under --nginx-defaults: %d, want 2k", got)
	}
}

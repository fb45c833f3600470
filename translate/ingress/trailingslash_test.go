package ingress_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func slashIngress(name string, annotations map[string]string, paths ...networkingv1.HTTPIngressPath) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Annotations: annotations},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host:             "slash.example.com",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
		}}},
	}
}

func slashPath(path string, pt networkingv1.PathType) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: &pt,
		Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}
}

// redirectsTo is each Exact route's 301 target on the host.
func redirectsTo(m *ir.IR) map[string]string {
	out := map[string]string{}
	for _, vh := range m.VirtualHosts {
		for _, r := range vh.Routes {
			if r.Action.Redirect != nil && r.Action.Redirect.Code == 301 && r.Match.PathType == ir.PathExact {
				out[r.Match.Path] = r.Action.Redirect.Path
			}
		}
	}
	return out
}

// The trailing-slash 301 (the Kubernetes blog's "Before You Migrate"):
// /foo/ (Prefix, Exact or ImplementationSpecific) answers /foo with a 301
// to /foo/ where no path of the host is /foo, outside regex mode, with a
// controller ConfigMap or --nginx-defaults only.
func TestTrailingSlashRedirect(t *testing.T) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	for _, c := range []struct {
		what      string
		opts      ingress.Options
		ingresses []*networkingv1.Ingress
		want      map[string]string
	}{
		{"without a ConfigMap: none", ingress.Options{HTTPPort: 8080},
			[]*networkingv1.Ingress{slashIngress("a", nil, slashPath("/foo/", networkingv1.PathTypePrefix))}, map[string]string{}},
		{"--nginx-defaults: Prefix, Exact, ImplementationSpecific", ingress.Options{HTTPPort: 8080, NginxDefaults: true},
			[]*networkingv1.Ingress{slashIngress("a", nil, slashPath("/foo/", networkingv1.PathTypePrefix), slashPath("/bar/", networkingv1.PathTypeExact),
				slashPath("/baz/", networkingv1.PathTypeImplementationSpecific), slashPath("/", networkingv1.PathTypePrefix), slashPath("/qux", networkingv1.PathTypePrefix))},
			map[string]string{"/foo": "/foo/", "/bar": "/bar/", "/baz": "/baz/"}},
		{"--configmap: another Ingress's /foo serves it", ingress.Options{HTTPPort: 8080, ConfigMap: name},
			[]*networkingv1.Ingress{slashIngress("a", nil, slashPath("/foo/", networkingv1.PathTypePrefix)), slashIngress("b", nil, slashPath("/foo", networkingv1.PathTypeExact))},
			map[string]string{}},
		{"regex mode: none", ingress.Options{HTTPPort: 8080, NginxDefaults: true},
			[]*networkingv1.Ingress{slashIngress("a", nil, slashPath("/foo/", networkingv1.PathTypePrefix)),
				slashIngress("b", map[string]string{"nginx.ingress.kubernetes.io/use-regex": "true"}, slashPath("/b.r", networkingv1.PathTypeImplementationSpecific))},
			map[string]string{}},
	} {
		t.Run(c.what, func(t *testing.T) {
			st := kube.NewState()
			st.Ingresses = c.ingresses
			m := ingress.NewBuilder(c.opts).Build(st)
			if err := m.Validate(); err != nil {
				t.Fatalf("the IR breaks its contract: %v", err)
			}
			got := redirectsTo(m)
			if len(got) != len(c.want) {
				t.Errorf("redirects %v, want %v", got, c.want)
			}
			for from, to := range c.want {
				if got[from] != to {
					t.Errorf("%s: redirect to %q, want %q (all: %v)", from, got[from], to, got)
				}
			}
		})
	}
}

package ingress_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// redirectsOf says, per path of host's routes, whether it redirects to
// HTTPS.
func redirectsOf(m *ir.IR, host string) map[string]bool {
	out := map[string]bool{}
	for _, vh := range m.VirtualHosts {
		if vh.Host != host {
			continue
		}
		for _, r := range vh.Routes {
			out[r.Match.Path] = r.Policy != nil && r.Policy.HTTPSRedirect != nil
		}
	}
	return out
}

// no-tls-redirect-locations (ingress-nginx's default: the ACME challenge
// path) exempts the Ingress paths starting with one of its locations from
// ssl-redirect and force-ssl-redirect, with a controller ConfigMap or
// --nginx-defaults only; a request path under it that only / serves is
// still redirected, as ingress-nginx decides it per location.
func TestNoTLSRedirectLocations(t *testing.T) {
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	ing := configTestIngress("acme", map[string]string{"nginx.ingress.kubernetes.io/force-ssl-redirect": "true"})
	impl := networkingv1.PathTypeImplementationSpecific
	paths := &ing.Spec.Rules[0].HTTP.Paths
	*paths = append(*paths,
		networkingv1.HTTPIngressPath{Path: "/.well-known/acme-challenge/token", PathType: &impl, Backend: (*paths)[0].Backend},
		networkingv1.HTTPIngressPath{Path: "/check-no-tls/x", PathType: &impl, Backend: (*paths)[0].Backend})
	for _, c := range []struct {
		what string
		opts ingress.Options
		data map[string]string
		want map[string]bool
	}{
		{"no ConfigMap: today's behaviour", ingress.Options{HTTPPort: 8080},
			nil, map[string]bool{"/": true, "/.well-known/acme-challenge/token": true, "/check-no-tls/x": true}},
		{"--nginx-defaults: the ACME path", ingress.Options{HTTPPort: 8080, NginxDefaults: true},
			nil, map[string]bool{"/": true, "/.well-known/acme-challenge/token": false, "/check-no-tls/x": true}},
		{"--configmap naming a ConfigMap not there: ingress-nginx's default", ingress.Options{HTTPPort: 8080, ConfigMap: name},
			nil, map[string]bool{"/": true, "/.well-known/acme-challenge/token": false, "/check-no-tls/x": true}},
		// settings/no_tls_redirect_locations.go sets /check-no-tls.
		{"the ConfigMap's locations replace the default", ingress.Options{HTTPPort: 8080, ConfigMap: name},
			map[string]string{"no-tls-redirect-locations": " /check-no-tls , "}, map[string]bool{"/": true, "/.well-known/acme-challenge/token": true, "/check-no-tls/x": false}},
		{"an empty list exempts nothing", ingress.Options{HTTPPort: 8080, ConfigMap: name},
			map[string]string{"no-tls-redirect-locations": ""}, map[string]bool{"/": true, "/.well-known/acme-challenge/token": true, "/check-no-tls/x": true}},
	} {
		t.Run(c.what, func(t *testing.T) {
			st := kube.NewState()
			st.Ingresses = []*networkingv1.Ingress{ing}
			if c.data != nil {
				st.ConfigMaps[name] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name.Name, Namespace: name.Namespace}, Data: c.data}
			}
			got := redirectsOf(ingress.NewBuilder(c.opts).Build(st), "acme.example.com")
			for path, want := range c.want {
				if got[path] != want {
					t.Errorf("%s redirects to HTTPS: %v, want %v (all: %v)", path, got[path], want, got)
				}
			}
		})
	}
}

package togateway

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

const nginx = "nginx.ingress.kubernetes.io/"

// state is one Ingress of namespace web, host a.example.com, path /app
// (Prefix) to Service web port 80 (named http), with its annotations.
func state(annotations map[string]string, edit ...func(*networkingv1.Ingress)) *kube.State {
	st := kube.NewState()
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "app", Annotations: annotations},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "a.example.com", IngressRuleValue: networkingv1.IngressRuleValue{
			HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/app", PathType: ptr(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}},
		}}}},
	}
	for _, e := range edit {
		e(ing)
	}
	st.Ingresses = []*networkingv1.Ingress{ing}
	st.Services[types.NamespacedName{Namespace: "web", Name: "web"}] = &kube.Service{Namespace: "web", Name: "web", Ports: []kube.ServicePort{{Name: "http", Port: 80}}}
	st.ConfigMaps[types.NamespacedName{Namespace: "web", Name: "headers"}] = &corev1.ConfigMap{Data: map[string]string{"X-Frame-Options": "DENY"}}
	return st
}

// rules is the JSON of the rules of the Route named, for matching a
// field's text.
func rules(t *testing.T, res *Result, name string) string {
	t.Helper()
	for _, hr := range res.HTTPRoutes {
		if hr.Name == name {
			raw, err := json.Marshal(hr.Spec)
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
	}
	t.Fatalf("no HTTPRoute %s among %d", name, len(res.HTTPRoutes))
	return ""
}

// Each converted annotation becomes its filter or field, with its outcome
// recorded; ingress-nginx's e2e test of the key is named where one is
// mirrored (kubernetes/ingress-nginx test/e2e/annotations/).
func TestAnnotations(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		edit        func(*networkingv1.Ingress)
		route       string // the Route whose rules hold want
		want        []string
		outcomes    map[string]Outcome
	}{
		{name: "none: a PathPrefix to the Service port", route: "app",
			want: []string{`"type":"PathPrefix","value":"/app"`, `"name":"web","port":80`, `"sectionName":"http"`}},
		{name: "a port name resolved through the Service", route: "app",
			edit: func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port = networkingv1.ServiceBackendPort{Name: "http"}
			},
			want: []string{`"name":"web","port":80`}},
		{name: "Exact", route: "app",
			edit: func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].HTTP.Paths[0].PathType = ptr(networkingv1.PathTypeExact)
			},
			want: []string{`"type":"Exact","value":"/app"`}},
		// forcesslredirect.go
		{name: "force-ssl-redirect", annotations: map[string]string{nginx + "force-ssl-redirect": "true"}, route: "app-redirect",
			want:     []string{`"scheme":"https"`, `"statusCode":308`, `"sectionName":"http"`},
			outcomes: map[string]Outcome{"force-ssl-redirect": ConvertedWithDifference}},
		{name: "ssl-redirect with preserve-trailing-slash, TLS host", route: "app-redirect",
			annotations: map[string]string{nginx + "ssl-redirect": "true", nginx + "preserve-trailing-slash": "true"},
			edit: func(ing *networkingv1.Ingress) {
				ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "a-tls"}}
			},
			want:     []string{`"scheme":"https"`},
			outcomes: map[string]Outcome{"ssl-redirect": Converted, "preserve-trailing-slash": Converted}},
		// redirect.go
		{name: "permanent-redirect", annotations: map[string]string{nginx + "permanent-redirect": "https://example.com:8443/new", nginx + "permanent-redirect-code": "308"},
			route:    "app",
			want:     []string{`"scheme":"https"`, `"hostname":"example.com"`, `"port":8443`, `"replaceFullPath":"/new"`, `"statusCode":308`},
			outcomes: map[string]Outcome{"permanent-redirect": ConvertedWithDifference, "permanent-redirect-code": Converted}},
		{name: "temporal-redirect wins", annotations: map[string]string{nginx + "temporal-redirect": "https://example.com/t", nginx + "permanent-redirect": "https://example.com/p"},
			route: "app", want: []string{`"replaceFullPath":"/t"`, `"statusCode":302`},
			outcomes: map[string]Outcome{"temporal-redirect": ConvertedWithDifference, "permanent-redirect": NotConverted}},
		// approot.go
		{name: "app-root", annotations: map[string]string{nginx + "app-root": "/foo"}, route: "app",
			want:     []string{`"type":"Exact","value":"/"`, `"replaceFullPath":"/foo"`, `"statusCode":302`},
			outcomes: map[string]Outcome{"app-root": ConvertedWithDifference}},
		// rewrite.go
		{name: "rewrite-target without captures", annotations: map[string]string{nginx + "rewrite-target": "/"}, route: "app",
			want:     []string{`"type":"RegularExpression","value":"(?i)(?:/app).*"`, `"type":"ReplaceFullPath","replaceFullPath":"/"`},
			outcomes: map[string]Outcome{"rewrite-target": Converted}},
		{name: "rewrite-target with captures", annotations: map[string]string{nginx + "rewrite-target": "/$1"}, route: "app",
			want:     []string{`"type":"RegularExpression"`},
			outcomes: map[string]Outcome{"rewrite-target": NotConverted}},
		{name: "rewrite-target: ingress-nginx's prefix idiom", annotations: map[string]string{nginx + "use-regex": "true", nginx + "rewrite-target": "/$2"}, route: "app",
			edit: func(ing *networkingv1.Ingress) {
				ing.Spec.Rules[0].HTTP.Paths[0].Path = "/app(/|$)(.*)"
				ing.Spec.Rules[0].HTTP.Paths[0].PathType = ptr(networkingv1.PathTypeImplementationSpecific)
			},
			want:     []string{`"type":"PathPrefix","value":"/app"`, `"type":"ReplacePrefixMatch","replacePrefixMatch":"/"`},
			outcomes: map[string]Outcome{"rewrite-target": ConvertedWithDifference, "use-regex": ConvertedWithDifference}},
		{name: "use-regex", annotations: map[string]string{nginx + "use-regex": "true"}, route: "app",
			want: []string{`"type":"RegularExpression","value":"(?i)(?:/app).*"`}, outcomes: map[string]Outcome{"use-regex": Converted}},
		// upstreamvhost.go
		{name: "upstream-vhost", annotations: map[string]string{nginx + "upstream-vhost": "internal.example.com"}, route: "app",
			want: []string{`"urlRewrite":{"hostname":"internal.example.com"}`}, outcomes: map[string]Outcome{"upstream-vhost": Converted}},
		// xforwardedprefix.go
		{name: "x-forwarded-prefix with a rewrite", annotations: map[string]string{nginx + "rewrite-target": "/", nginx + "x-forwarded-prefix": "/app"}, route: "app",
			want: []string{`"requestHeaderModifier":{"set":[{"name":"X-Forwarded-Prefix","value":"/app"}]}`}, outcomes: map[string]Outcome{"x-forwarded-prefix": Converted}},
		// customheaders.go
		{name: "custom-headers", annotations: map[string]string{nginx + "custom-headers": "web/headers"}, route: "app",
			want: []string{`"responseHeaderModifier":{"set":[{"name":"X-Frame-Options","value":"DENY"}]}`}, outcomes: map[string]Outcome{"custom-headers": Converted}},
		// cors.go
		{name: "enable-cors with ingress-nginx's defaults", annotations: map[string]string{nginx + "enable-cors": "true"}, route: "app",
			want:     []string{`"allowOrigins":["*"]`, `"allowCredentials":true`, `"allowMethods":["GET","PUT","POST","DELETE","PATCH","OPTIONS"]`, `"maxAge":1728000`},
			outcomes: map[string]Outcome{"enable-cors": ConvertedWithDifference}},
		{name: "listed with why", annotations: map[string]string{nginx + "proxy-read-timeout": "5", nginx + "auth-url": "http://auth.web.svc/check"}, route: "app",
			want: []string{`"name":"web"`}, outcomes: map[string]Outcome{"proxy-read-timeout": NotConverted, "auth-url": NotConverted}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var edits []func(*networkingv1.Ingress)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			res := Convert(state(tc.annotations, edits...), Options{})
			got := rules(t, res, tc.route)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the rules of %s lack %s:\n%s", tc.route, w, got)
				}
			}
			if len(res.Ingresses) != 1 {
				t.Fatalf("%d Ingresses reported", len(res.Ingresses))
			}
			byName := map[string]Annotation{}
			for _, a := range res.Ingresses[0].Annotations {
				byName[strings.TrimPrefix(a.Key, nginx)] = a
			}
			if len(byName) != len(tc.annotations) {
				t.Errorf("%d annotations reported, %d set: %v", len(byName), len(tc.annotations), res.Ingresses[0].Annotations)
			}
			for name, want := range tc.outcomes {
				if a := byName[name]; a.Outcome != want || a.Note == "" {
					t.Errorf("%s: %q (%q), want %q with a note", name, a.Outcome, a.Note, want)
				}
			}
		})
	}
}

// A redirected TLS host is forwarded over HTTPS and redirected over HTTP
// only: the forwarding Route has no parentRef of the HTTP listener.
func TestSSLRedirectSplitsTheListeners(t *testing.T) {
	res := Convert(state(map[string]string{nginx + "ssl-redirect": "true"}, func(ing *networkingv1.Ingress) {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "a-tls"}}
	}), Options{})
	main := rules(t, res, "app")
	if strings.Contains(main, `"sectionName":"http"`) || !strings.Contains(main, `"sectionName":"https-a-example-com"`) {
		t.Errorf("the forwarding Route's parents: %s", main)
	}
	if len(res.Gateways) != 1 || len(res.Gateways[0].Spec.Listeners) != 2 {
		t.Fatalf("Gateways: %+v", res.Gateways)
	}
	l := res.Gateways[0].Spec.Listeners[1]
	if l.Port != HTTPSPort || string(*l.Hostname) != "a.example.com" || string(l.TLS.CertificateRefs[0].Name) != "a-tls" || l.TLS.CertificateRefs[0].Namespace != nil {
		t.Errorf("HTTPS listener %+v", l)
	}
}

// A Gateway of a namespace of its own takes Routes from every namespace
// and is granted the Ingresses' TLS Secrets.
func TestGatewayNamespaceGrantsSecrets(t *testing.T) {
	res := Convert(state(nil, func(ing *networkingv1.Ingress) {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}, SecretName: "a-tls"}}
	}), Options{GatewayNamespace: "gateways", GatewayName: "edge"})
	if len(res.Gateways) != 1 || res.Gateways[0].Namespace != "gateways" || res.Gateways[0].Name != "edge" {
		t.Fatalf("Gateways: %+v", res.Gateways)
	}
	if len(res.ReferenceGrants) != 1 {
		t.Fatalf("ReferenceGrants: %+v", res.ReferenceGrants)
	}
	g := res.ReferenceGrants[0]
	if g.Namespace != "web" || string(g.Spec.From[0].Namespace) != "gateways" || g.Spec.To[0].Kind != "Secret" || string(*g.Spec.To[0].Name) != "a-tls" {
		t.Errorf("ReferenceGrant %+v", g)
	}
	if main := rules(t, res, "app"); !strings.Contains(main, `"namespace":"gateways","name":"edge"`) {
		t.Errorf("parentRefs: %s", main)
	}
}

// A weighted canary joins its mainline's rule as a second backendRef,
// and has no Route of its own.
func TestCanaryWeights(t *testing.T) {
	st := state(nil)
	canary := st.Ingresses[0].DeepCopy()
	canary.Name = "app-canary"
	canary.Annotations = map[string]string{nginx + "canary": "true", nginx + "canary-weight": "25"}
	canary.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "web-next"
	st.Ingresses = append(st.Ingresses, canary)
	res := Convert(st, Options{})
	if len(res.HTTPRoutes) != 1 {
		t.Fatalf("%d HTTPRoutes, want the mainline's alone", len(res.HTTPRoutes))
	}
	if got := rules(t, res, "app"); !strings.Contains(got, `"name":"web","port":80,"weight":75`) || !strings.Contains(got, `"name":"web-next","port":80,"weight":25`) {
		t.Errorf("backendRefs: %s", got)
	}
}

// A canary by header and cookie: rules ahead of the mainline's, in the
// order nginx's balancer tries them (header always, never; cookie
// always, never), each a header match.
func TestCanaryByHeaderAndCookie(t *testing.T) {
	st := state(nil)
	canary := st.Ingresses[0].DeepCopy()
	canary.Name = "app-canary"
	canary.Annotations = map[string]string{nginx + "canary": "true", nginx + "canary-by-header": "X_Canary", nginx + "canary-by-cookie": "beta"}
	canary.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name = "web-next"
	st.Ingresses = append(st.Ingresses, canary)
	res := Convert(st, Options{})
	rs := res.HTTPRoutes[0].Spec.Rules
	if len(rs) != 5 {
		t.Fatalf("%d rules, want 4 ahead of the mainline's", len(rs))
	}
	want := []struct{ header, value, backend string }{
		{"X-Canary", "always", "web-next"}, {"X-Canary", "never", "web"},
		{"Cookie", cookieIs("beta", "always"), "web-next"}, {"Cookie", cookieIs("beta", "never"), "web"},
	}
	for i, w := range want {
		h := rs[i].Matches[0].Headers
		if len(h) != 1 || string(h[0].Name) != w.header || h[0].Value != w.value || string(rs[i].BackendRefs[0].Name) != w.backend {
			t.Errorf("rule %d: %+v to %s, want %s=%s to %s", i, h, rs[i].BackendRefs[0].Name, w.header, w.value, w.backend)
		}
	}
	if len(rs[4].Matches[0].Headers) != 0 || len(rs[4].BackendRefs) != 1 {
		t.Errorf("the mainline's rule: %+v", rs[4])
	}
}

// A Gateway over the CRD's 64 listeners is reported: the API server
// would refuse it.
func TestTooManyListeners(t *testing.T) {
	res := Convert(state(nil, func(ing *networkingv1.Ingress) {
		rule := ing.Spec.Rules[0]
		ing.Spec.Rules = nil
		for i := range MaxListeners {
			rule.Host = fmt.Sprintf("h%d.example.com", i)
			ing.Spec.Rules = append(ing.Spec.Rules, rule)
			ing.Spec.TLS = append(ing.Spec.TLS, networkingv1.IngressTLS{Hosts: []string{rule.Host}, SecretName: "tls"})
		}
	}), Options{})
	if n := len(res.Gateways[0].Spec.Listeners); n != MaxListeners+1 || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "65 listeners") {
		t.Errorf("%d listeners, problems %v", n, res.Problems)
	}
}

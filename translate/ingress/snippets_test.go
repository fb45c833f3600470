package ingress_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// headersSnippetIngress is refuse_test.go's Ingress with a
// configuration-snippet that is translated whole.
var headersSnippetIngress = strings.Replace(snippetIngress, `"deny all; mirror /copy;"`, `'more_set_headers "X-A: 1";'`, 1)

// Under a controller ConfigMap, allow-snippet-annotations and
// annotations-risk-level decide as ingress-nginx's
// internal/ingress/controller/controller.go and
// annotations/parser/validators.go (CheckAnnotationRisk) do: below
// Critical the Ingress is rejected (refused here), at Critical without
// allow-snippet-annotations its snippet is dropped
// (test/e2e/annotations/snippet.go "drops snippet more_set_header in all
// locations if disabled by admin"), with both it applies; without a
// ConfigMap it is translated.
func TestSnippetAnnotationsUnderTheConfigMap(t *testing.T) {
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "controller"}
	for _, tc := range []struct {
		name   string
		data   string // the ConfigMap's data; "-": no --configmap
		reason string // the Ingress's problem, if any
		header bool   // the snippet's header applied
		served bool
	}{
		{"no ConfigMap", "-", "", true, true},
		{"ingress-nginx's defaults", "{}", "AnnotationRefused", false, false},
		{"allowed at High", `{allow-snippet-annotations: "true"}`, "AnnotationRefused", false, false},
		{"Critical, not allowed", `{annotations-risk-level: Critical}`, "SnippetDropped", false, true},
		{"Critical and allowed", `{annotations-risk-level: Critical, allow-snippet-annotations: "true"}`, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests := headersSnippetIngress
			opts := ingress.Options{HTTPPort: 8080}
			var st *kube.State
			var err error
			if tc.data != "-" {
				opts.ConfigMap = cm
				manifests += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: %s\n", cm.Name, cm.Namespace, tc.data)
				st, err = kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, ingress.WithConfigMap(ingress.References, cm))
			} else {
				st, err = kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, kube.Refs{})
			}
			if err != nil {
				t.Fatal(err)
			}
			out := ingress.NewBuilder(opts).Build(st)
			r := onlyRoute(t, out)
			if served := r.Action.Forward != nil; served != tc.served {
				t.Errorf("served %v (%+v), want %v", served, r.Action, tc.served)
			}
			header := r.Policy != nil && r.Policy.ResponseHeaders != nil && len(r.Policy.ResponseHeaders.Set) == 1
			if header != tc.header {
				t.Errorf("the snippet's header applied: %v, want %v", header, tc.header)
			}
			var reasons []string
			for _, p := range out.Problems {
				if p.Name == "snippet" {
					reasons = append(reasons, p.Reason)
				}
			}
			if want := tc.reason; want == "" && len(reasons) > 0 || want != "" && (len(reasons) != 1 || reasons[0] != want) {
				t.Errorf("problems %v, want %q", out.Problems, want)
			}
		})
	}
}

// The ConfigMap's location-snippet follows an Ingress's
// configuration-snippet in the same location (nginx.tmpl), so in one
// rewrite phase: the annotation's return ends it before the ConfigMap's,
// whose headers still apply to the answer.
func TestLocationSnippetFollowsTheConfigurationSnippet(t *testing.T) {
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "controller"}
	manifests := strings.Replace(headersSnippetIngress, `'more_set_headers "X-A: 1";'`, `'return 403;'`, 1) + `---
apiVersion: v1
kind: ConfigMap
metadata: {name: controller, namespace: ingress-nginx}
data:
  annotations-risk-level: Critical
  allow-snippet-annotations: "true"
  location-snippet: 'more_set_headers "X-L: 1"; return 404;'
`
	st, err := kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, ingress.WithConfigMap(ingress.References, cm))
	if err != nil {
		t.Fatal(err)
	}
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, ConfigMap: cm}).Build(st)
	r := onlyRoute(t, out)
	if r.Action.Direct == nil || r.Action.Direct.Status != 403 || len(r.Match.Headers) != 0 || r.Policy == nil || r.Policy.ResponseHeaders == nil || len(r.Policy.ResponseHeaders.Set) != 1 {
		t.Errorf("route %+v %+v: want every request answered 403 (problems %v)", r.Match, r.Action.Direct, out.Problems)
	}
}

// An if block's headers join the custom-headers annotation's, which nginx
// sets after the snippet (nginx.tmpl), on the route of the if's requests
// as on the others.
func TestSnippetIfKeepsCustomHeaders(t *testing.T) {
	manifests := `
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: headers, namespace: default}
data: {X-Custom: "1"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/custom-headers: default/headers
    nginx.ingress.kubernetes.io/configuration-snippet: 'if ($http_x_debug = 1) { more_set_headers "X-Debug: on"; }'
spec:
  rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`
	st := stateWith(t, manifests, ingress.References)
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, AllowedResponseHeaders: []string{"X-Custom"}}).Build(st)
	routes := out.VirtualHosts[0].Routes
	if len(routes) != 2 || len(routes[0].Match.Headers) != 1 {
		t.Fatalf("routes %+v: want the if's route, then the path's", routes)
	}
	var names []string
	for _, h := range routes[0].Policy.ResponseHeaders.Set {
		names = append(names, h.Name)
	}
	if strings.Join(names, ",") != "X-Debug,X-Custom" {
		t.Errorf("the if's route sets %v, want the if's header then custom-headers'", names)
	}
}

// $proxy_add_x_forwarded_for reads the client's X-Forwarded-For from the
// listener's copy in X-Original-Forwarded-For; where the ConfigMap's
// forwarded-for-header makes the listeners read the client from another
// header, the copy is of that one, and the snippet is refused.
func TestProxyAddForwardedForUnderForwardedForHeader(t *testing.T) {
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "controller"}
	snippet := `'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;'`
	for _, tc := range []struct {
		name   string
		data   string
		served bool
	}{
		{"X-Forwarded-For", `{annotations-risk-level: Critical, allow-snippet-annotations: "true", use-forwarded-headers: "true"}`, true},
		{"a header of its own", `{annotations-risk-level: Critical, allow-snippet-annotations: "true", use-forwarded-headers: "true", forwarded-for-header: X-Client-IP}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := buildWithConfigMap(t, strings.Replace(headersSnippetIngress, `'more_set_headers "X-A: 1";'`, snippet, 1), cm, tc.data)
			r := onlyRoute(t, out)
			if served := r.Action.Forward != nil; served != tc.served {
				t.Errorf("served %v (problems %v), want %v", served, out.Problems, tc.served)
			}
			if !tc.served && !strings.Contains(fmt.Sprint(out.Problems), "forwarded-for-header X-Client-IP") {
				t.Errorf("problems %v, want the snippet refused for forwarded-for-header", out.Problems)
			}
			if tc.served && (r.Policy == nil || r.Policy.RequestHeaders == nil || len(r.Policy.RequestHeaders.Add) != 2) {
				t.Errorf("policy %+v: want the client's list and its address added", r.Policy)
			}
		})
	}
}

// nginx's realip module does nothing without set_real_ip_from
// (ngx_http_realip_module), which ingress-nginx's template writes only
// with use-forwarded-headers or enable-real-ip: a snippet's
// real_ip_header has no effect otherwise, and is refused there, where it
// would read the client's address from another header.
func TestSnippetRealIPHeader(t *testing.T) {
	cm := types.NamespacedName{Namespace: "ingress-nginx", Name: "controller"}
	snippet := `nginx.ingress.kubernetes.io/server-snippet: "real_ip_header CF-Connecting-IP;"`
	for _, tc := range []struct {
		name   string
		data   string
		served bool
	}{
		{"realip off", `{annotations-risk-level: Critical, allow-snippet-annotations: "true"}`, true},
		{"use-forwarded-headers", `{annotations-risk-level: Critical, allow-snippet-annotations: "true", use-forwarded-headers: "true"}`, false},
		{"enable-real-ip", `{annotations-risk-level: Critical, allow-snippet-annotations: "true", enable-real-ip: "true"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests := strings.Replace(headersSnippetIngress, `nginx.ingress.kubernetes.io/configuration-snippet: 'more_set_headers "X-A: 1";'`, snippet, 1)
			if !strings.Contains(manifests, snippet) {
				t.Fatal("the snippet is not in the manifests")
			}
			out := buildWithConfigMap(t, manifests, cm, tc.data)
			r := onlyRoute(t, out)
			if served := r.Action.Forward != nil; served != tc.served {
				t.Errorf("served %v (problems %v), want %v", served, out.Problems, tc.served)
			}
			if !tc.served && !strings.Contains(fmt.Sprint(out.Problems), "directive real_ip_header (line 1)") {
				t.Errorf("problems %v: want real_ip_header named", out.Problems)
			}
		})
	}
}

// buildWithConfigMap builds manifests beside the controller ConfigMap cm
// holding data (a YAML map), with the builder reading it.
func buildWithConfigMap(t *testing.T, manifests string, cm types.NamespacedName, data string) *ir.IR {
	t.Helper()
	manifests += fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: %s\n", cm.Name, cm.Namespace, data)
	st, err := kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, ingress.WithConfigMap(ingress.References, cm))
	if err != nil {
		t.Fatal(err)
	}
	return ingress.NewBuilder(ingress.Options{HTTPPort: 8080, ConfigMap: cm}).Build(st)
}

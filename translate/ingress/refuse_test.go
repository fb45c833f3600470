package ingress_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

const snippetIngress = `
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: "deny all; mirror /copy;"
    nginx.ingress.kubernetes.io/proxy-read-timeout: "5"
spec:
  rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`

func onlyRoute(t *testing.T, out *ir.IR) *ir.Route {
	t.Helper()
	if len(out.VirtualHosts) != 1 || len(out.VirtualHosts[0].Routes) != 1 {
		t.Fatalf("virtual hosts %v, want one with one route", out.VirtualHosts)
	}
	return out.VirtualHosts[0].Routes[0]
}

func problemReasons(out *ir.IR) []string {
	var reasons []string
	for _, p := range out.Problems {
		reasons = append(reasons, p.Reason)
	}
	return reasons
}

// By default an Ingress with a snippet is refused: its path answers 503,
// with no policy and no cluster.
func TestRefusedIngressAnswers503(t *testing.T) {
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080}).Build(stateOf(t, snippetIngress))
	r := onlyRoute(t, out)
	if r.Action.Direct == nil || r.Action.Direct.Status != 503 || r.Policy != nil || len(out.Clusters) != 0 {
		t.Errorf("route %+v (policy %v), clusters %v: want a direct 503 and nothing else", r.Action, r.Policy, out.Clusters)
	}
	if got := problemReasons(out); len(got) != 1 || got[0] != "AnnotationRefused" {
		t.Errorf("problems %v, want one AnnotationRefused", out.Problems)
	}
}

// --unsupported-annotations=ignore serves it without the snippet, and says
// so; the rest of its annotations apply.
func TestIgnoreRefusalsServesWithoutTheKey(t *testing.T) {
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, IgnoreRefusals: true}).Build(stateOf(t, snippetIngress))
	r := onlyRoute(t, out)
	if r.Action.Forward == nil || r.Policy == nil || r.Policy.Timeouts == nil {
		t.Errorf("route %+v (policy %+v): want it forwarded with its read timeout", r.Action, r.Policy)
	}
	if got := problemReasons(out); len(got) != 1 || got[0] != "AnnotationIgnored" {
		t.Errorf("problems %v, want one AnnotationIgnored", out.Problems)
	}
}

// --unsupported-annotations=ignore covers keys ingress-xds does not apply,
// never an access control it applies but cannot apply as written: a
// source range that does not parse still refuses the Ingress.
func TestIgnoreRefusalsNeverServesABrokenAccessControl(t *testing.T) {
	st := stateOf(t, `
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: broken
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/allowlist-source-range: "10.0.0.0/33", nginx.ingress.kubernetes.io/server-snippet: "x"}
spec:
  rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`)
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, IgnoreRefusals: true}).Build(st)
	if r := onlyRoute(t, out); r.Action.Direct == nil || r.Action.Direct.Status != 503 {
		t.Errorf("route %+v: want a 503", r.Action)
	}
	got := problemReasons(out)
	slices.Sort(got)
	if !slices.Equal(got, []string{"AnnotationIgnored", "AnnotationRefused"}) {
		t.Errorf("problems %v: want the snippet ignored and the range refused", out.Problems)
	}
}

// The status writer's view: a snippet not translated whole refuses the
// Ingress (no status address), one translated whole does not; under a
// controller ConfigMap, its rules refuse as ingress-nginx's store skips
// an Ingress (store.go syncIngress): a snippet below the Critical
// annotations-risk-level (its default High, the ConfigMap missing too),
// and a word of annotation-value-word-blocklist, whatever
// --unsupported-annotations says.
func TestRefusedWithSnippets(t *testing.T) {
	reg := annotations.New("")
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	configMap := func(data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}, Data: data}
	}
	critical := configMap(map[string]string{"annotations-risk-level": "Critical", "allow-snippet-annotations": "true"})
	blocklist := configMap(map[string]string{"annotation-value-word-blocklist": "load_module,X-A"})
	for _, tc := range []struct {
		snippet string
		opts    ingress.Options
		cm      *corev1.ConfigMap
		refused bool
	}{
		{`more_set_headers "X-A: 1";`, ingress.Options{}, nil, false},
		{`mirror /copy;`, ingress.Options{}, nil, true},
		{`mirror /copy;`, ingress.Options{IgnoreRefusals: true}, nil, false},
		{`more_set_headers "X-A: 1";`, ingress.Options{ConfigMap: name}, nil, true},
		{`more_set_headers "X-A: 1";`, ingress.Options{ConfigMap: name}, configMap(nil), true},
		{`more_set_headers "X-A: 1";`, ingress.Options{ConfigMap: name}, critical, false},
		{`mirror /copy;`, ingress.Options{ConfigMap: name}, critical, true},
		{`more_set_headers "X-B: 1";`, ingress.Options{ConfigMap: name, IgnoreRefusals: true}, blocklist, false},
		{`more_set_headers "X-A: 1";`, ingress.Options{ConfigMap: name, IgnoreRefusals: true}, blocklist, true},
		// The ConfigMap is read only when serve is given one.
		{`more_set_headers "X-A: 1";`, ingress.Options{}, blocklist, false},
	} {
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default",
			Annotations: map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": tc.snippet}}}
		refused := ingress.RefusedWith(reg, tc.opts)
		if got := refused(ing, tc.cm); got != tc.refused {
			t.Errorf("%q with %+v and ConfigMap %v: refused %v, want %v", tc.snippet, tc.opts, tc.cm, got, tc.refused)
		}
	}
}

// The status writer's view of annotations-risk-level: a key of ingress-
// nginx's of a higher risk refuses the Ingress, as ingress-nginx's
// Extract rejects it (parser/validators.go CheckAnnotationRisk),
// whatever --unsupported-annotations says; at the level of the key, or
// without a ConfigMap, it is served.
func TestRefusedWithRiskLevel(t *testing.T) {
	reg := annotations.New("")
	name := types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}
	level := func(l string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}, Data: map[string]string{"annotations-risk-level": l}}
	}
	// server-alias is High, whitelist-source-range (allowlist-source-range's
	// old name) Medium, proxy-read-timeout Low.
	for _, tc := range []struct {
		key     string
		opts    ingress.Options
		cm      *corev1.ConfigMap
		refused bool
	}{
		{"server-alias", ingress.Options{ConfigMap: name}, level("Medium"), true},
		{"server-alias", ingress.Options{ConfigMap: name, IgnoreRefusals: true}, level("medium"), true},
		{"server-alias", ingress.Options{ConfigMap: name}, level("High"), false},
		{"server-alias", ingress.Options{ConfigMap: name}, nil, false},
		{"server-alias", ingress.Options{}, level("Low"), false},
		{"whitelist-source-range", ingress.Options{ConfigMap: name}, level("Low"), true},
		{"whitelist-source-range", ingress.Options{ConfigMap: name}, level("Medium"), false},
		{"proxy-read-timeout", ingress.Options{ConfigMap: name}, level("Low"), false},
	} {
		values := map[string]string{"server-alias": "www.a.example", "whitelist-source-range": "10.0.0.0/8", "proxy-read-timeout": "30"}
		ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default",
			Annotations: map[string]string{"nginx.ingress.kubernetes.io/" + tc.key: values[tc.key]}}}
		if got := ingress.RefusedWith(reg, tc.opts)(ing, tc.cm); got != tc.refused {
			t.Errorf("%s with %+v and ConfigMap %v: refused %v, want %v", tc.key, tc.opts, tc.cm, got, tc.refused)
		}
	}
}

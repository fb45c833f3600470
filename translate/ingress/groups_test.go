package ingress

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestGroupParsersReturnData: a group's parser gives its result and
// problems as data, reading objects only through its env, so the parsers
// may run in any order: the merge of their results is the same.
func TestGroupParsersReturnData(t *testing.T) {
	values, issues := annotations.New("").Parse(map[string]string{
		annotations.NginxPrefix + "/proxy-connect-timeout": "7",
		annotations.NginxPrefix + "/backend-protocol":      "HTTPS",
		annotations.NginxPrefix + "/ssl-passthrough":       "true",
		annotations.NginxPrefix + "/custom-headers":        "shop/headers",
		annotations.NginxPrefix + "/proxy-http-version":    "1.0",
	})
	if len(issues) > 0 {
		t.Fatalf("issues %v", issues)
	}
	headers := types.NamespacedName{Namespace: "shop", Name: "headers"}
	st := &kube.State{ConfigMaps: map[types.NamespacedName]*corev1.ConfigMap{
		headers: {Data: map[string]string{"X-A": "1"}},
	}}
	var r reads
	env := groupEnv{
		ing:     &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
		opts:    &Options{EnableSSLPassthrough: true, AllowedResponseHeaders: []string{"X-A"}},
		objects: objectReads{state: st, reads: &r},
	}
	parse := func(reversed bool) (ir.RoutePolicy, merged, []problem) {
		var g groups
		var all []problem
		steps := []func(){
			func() {
				var ps []problem
				g.proxy, ps = parseProxy(values, false)
				all = append(all, ps...)
			},
			func() {
				var ps []problem
				g.customHeaders, ps = parseCustomHeaders(values, env)
				all = append(all, ps...)
			},
			func() {
				var ps []problem
				g.upstream, ps = parseUpstream(values, env)
				all = append(all, ps...)
			},
			func() {
				var ps []problem
				g.passthrough, ps = parsePassthrough(values, env.opts)
				all = append(all, ps...)
			},
		}
		for i := range steps {
			if reversed {
				i = len(steps) - 1 - i
			}
			steps[i]()
		}
		p, m := mergeGroups(&g)
		return p, m, all
	}
	p, m, problems := parse(false)
	want := &ir.ClusterPolicy{ConnectTimeout: ir.Duration(7 * time.Second), TLS: &ir.UpstreamTLS{}}
	if !reflect.DeepEqual(m.cluster, want) {
		t.Errorf("cluster policy %+v, want %+v", m.cluster, want)
	}
	if p.ResponseHeaders == nil || !reflect.DeepEqual(p.ResponseHeaders.Set, []ir.Header{{Name: "X-A", Value: "1"}}) {
		t.Errorf("response headers %+v", p.ResponseHeaders)
	}
	if len(problems) != 1 || problems[0].reason != "UnsupportedAnnotationValue" || problems[0].refuses {
		t.Errorf("problems %+v, want proxy-http-version's", problems)
	}
	if len(r.secrets) > 0 || len(r.services) > 0 || len(r.configMaps) != 1 || r.configMaps[headers] == nil {
		t.Errorf("read %+v, want the custom-headers ConfigMap", r)
	}
	rp, rm, rproblems := parse(true)
	if !reflect.DeepEqual(rp, p) || !reflect.DeepEqual(rm, m) || !reflect.DeepEqual(rproblems, problems) {
		t.Errorf("in reverse order: %+v %+v %+v, want %+v %+v %+v", rp, rm, rproblems, p, m, problems)
	}
}

package configmap

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestHeaderMaps: add-headers and proxy-set-headers name a ConfigMap,
// namespace/name, as ingress-nginx's nginx.go looks it up in its store;
// its headers are translated as nginx.tmpl writes them, or, one not
// translated whole, none is applied and the key is reported.
func TestHeaderMaps(t *testing.T) {
	maps := map[types.NamespacedName]map[string]string{
		{Namespace: "ns", Name: "add"}:   {"X-B": "2", "X-A": "$host", "X-Gone": ""},
		{Namespace: "ns", Name: "proxy"}: {"X-Request-Start": "t=$request_id", "X-Forwarded-For": "$proxy_add_x_forwarded_for"},
		{Namespace: "ns", Name: "bad"}:   {"X-Ok": "1", "X-Geo": "$geoip_country_code"},
		{Namespace: "ns", Name: "host"}:  {"Host": "other.example"},
	}
	read := func(n types.NamespacedName) (map[string]string, bool) { m, ok := maps[n]; return m, ok }
	table := New(annotations.New(""))

	s := table.Parse(map[string]string{"add-headers": "ns/add", "proxy-set-headers": " ns/proxy "})
	if got, want := NamedConfigMaps(map[string]string{"add-headers": "ns/add", "proxy-set-headers": " ns/proxy "}),
		[]types.NamespacedName{{Namespace: "ns", Name: "add"}, {Namespace: "ns", Name: "proxy"}}; !slices.Equal(got, want) {
		t.Errorf("NamedConfigMaps = %v, want %v", got, want)
	}
	s.ReadHeaderMaps(read)
	if len(s.Issues) != 0 {
		t.Fatalf("issues: %+v", s.Issues)
	}
	want := &ir.HeaderChanges{Remove: []string{"x-gone"}, Set: []ir.Header{
		{Name: "X-A", Parts: []ir.ValuePart{{Var: ir.VarHost}}}, {Name: "X-B", Value: "2"}}}
	if !reflect.DeepEqual(s.AddHeaders, want) {
		t.Errorf("AddHeaders = %+v, want %+v (in the names' order, an empty value clearing)", s.AddHeaders, want)
	}
	if !reflect.DeepEqual(s.ProxySetHeaders, maps[types.NamespacedName{Namespace: "ns", Name: "proxy"}]) {
		t.Errorf("ProxySetHeaders = %v", s.ProxySetHeaders)
	}

	for _, tc := range []struct {
		name, key, value, reason, says string
	}{
		{"no namespace", "add-headers", "add", "InvalidConfigMapValue", "not namespace/name"},
		{"missing", "proxy-set-headers", "ns/missing", "ConfigMapNotFound", "no such ConfigMap"},
		{"an unknown variable", "add-headers", "ns/bad", "InvalidConfigMapValue", "header X-Geo: variable $geoip_country_code"},
		{"a second Host", "proxy-set-headers", "ns/host", "InvalidConfigMapValue", "header Host: a Host other than the client's: ingress-nginx would send it as a second Host line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := table.Parse(map[string]string{tc.key: tc.value})
			s.ReadHeaderMaps(read)
			if s.AddHeaders != nil || s.ProxySetHeaders != nil {
				t.Errorf("applied: %+v, %v", s.AddHeaders, s.ProxySetHeaders)
			}
			if len(s.Issues) != 1 || s.Issues[0].Key != tc.key || s.Issues[0].Reason != tc.reason || !strings.Contains(s.Issues[0].Message, tc.says) {
				t.Errorf("issues %+v, want one %s of %s saying %q", s.Issues, tc.reason, tc.key, tc.says)
			}
		})
	}
}

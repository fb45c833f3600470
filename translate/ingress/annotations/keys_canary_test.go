package annotations

import (
	"strings"
	"testing"
)

// The canary and affinity keys read their values as ingress-nginx's
// validators do (less what Envoy or a Set-Cookie cannot carry): a value
// refused here is an InvalidAnnotation, and the key is not applied.
func TestCanaryAndAffinityValues(t *testing.T) {
	r := New("")
	for _, tc := range []struct {
		key, value string
		want       any // nil: refused
	}{
		{"canary", "true", true}, {"canary", "yes", nil},
		{"canary-weight", "10", 10}, {"canary-weight", "0", 0}, {"canary-weight", "-5", nil}, {"canary-weight", "1.5", nil},
		{"canary-weight", "99999999999", nil}, {"canary-weight-total", "1000", 1000}, {"canary-weight-total", "lots", nil},
		{"canary-by-header", "X-Canary", "X-Canary"}, {"canary-by-header", " X_Canary ", "X_Canary"},
		{"canary-by-header", "X Canary", nil}, {"canary-by-header", "a:b", nil}, {"canary-by-header", "", nil},
		{"canary-by-header-value", "Do Canary", "Do Canary"}, {"canary-by-header-value", "a\r\nb", nil}, {"canary-by-header-value", "a;b", nil},
		{"canary-by-header-pattern", "^Do[A-Z][a-z]+y$", "^Do[A-Z][a-z]+y$"}, {"canary-by-header-pattern", "^(?=Do)", nil},
		{"canary-by-header-pattern", "[][**da?$&*", nil}, {"canary-by-header-pattern", "a#b", nil},
		{"canary-by-header-pattern", strings.Repeat("a", 1001), nil},
		{"canary-by-cookie", "canary", "canary"}, {"canary-by-cookie", "a=b", nil}, {"canary-by-cookie", "a\r\nSet-Cookie: x", nil},
		{"affinity", "cookie", "cookie"}, {"affinity", " Cookie", "cookie"}, {"affinity", "ip", nil},
		{"affinity-mode", "Persistent", "persistent"}, {"affinity-mode", "sticky", nil},
		{"affinity-canary-behavior", "legacy", "legacy"}, {"affinity-canary-behavior", "balanced", nil},
		{"session-cookie-name", "SERVERID", "SERVERID"}, {"session-cookie-name", "a b", nil}, {"session-cookie-name", "a;b", nil},
		{"session-cookie-path", "/foo/bar", "/foo/bar"}, {"session-cookie-path", "foo", nil}, {"session-cookie-path", "/a; Domain=x", nil},
		{"session-cookie-path", "/a\r\nX: 1", nil},
		{"session-cookie-domain", "foo.bar", "foo.bar"}, {"session-cookie-domain", "foo.bar; Secure", nil},
		{"session-cookie-samesite", "none", "None"}, {"session-cookie-samesite", "LAX", "Lax"}, {"session-cookie-samesite", "sometimes", nil},
		{"session-cookie-secure", "true", true}, {"session-cookie-secure", "on", nil},
		{"session-cookie-max-age", "abc", nil}, {"session-cookie-max-age", "0", nil}, {"session-cookie-max-age", "-1", nil},
	} {
		v, issues := r.Parse(map[string]string{NginxPrefix + "/" + tc.key: tc.value})
		d := r.byKey[NginxPrefix+"/"+tc.key].def
		got, ok := v.parsed[d]
		refused := len(issues) == 1 && issues[0].Reason == "InvalidAnnotation"
		if tc.want == nil {
			if ok || !refused {
				t.Errorf("%s %q: %v (set %v), issues %v; want it refused", tc.key, tc.value, got, ok, issues)
			}
			continue
		}
		if !ok || got != tc.want || len(issues) > 0 {
			t.Errorf("%s %q: %v (set %v), issues %v; want %v", tc.key, tc.value, got, ok, issues, tc.want)
		}
	}
}

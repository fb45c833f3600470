package translate_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// basicAuthBadInputCases are the rows of docs/bad-input.md for basic
// authentication: what ingress-nginx denies (a Secret that cannot be used)
// answers 503; a value that does not parse refuses the Ingress; never is a
// path served without the check it asked for, and nothing hostile reaches
// Envoy or the authorisation service.
func basicAuthBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	denied := routeAnswers("bad.example.com", 503)
	basic := func(secret string) string {
		return `nginx.ingress.kubernetes.io/auth-type: basic, nginx.ingress.kubernetes.io/auth-secret: "` + secret + `"`
	}
	secret := func(name string, data map[string]string) string {
		s := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: %s, namespace: default}\ndata:\n", name)
		for k, v := range data {
			s += fmt.Sprintf("  %s: %s\n", k, base64.StdEncoding.EncodeToString([]byte(v)))
		}
		return s + "---\n"
	}
	users := secret("users", map[string]string{"auth": "foo:$apr1$saltsalt$qYpLAVWkBvXFyDme7.oc1/\n"})
	return []badInputCase{
		{name: "auth-secret-missing", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", basic("nobody"), rule),
			check:     denied},
		{name: "auth-secret-other-namespace", reason: "InvalidAnnotation",
			manifests: badService + users + annotated("bad", basic("kube-system/users"), rule),
			check:     denied},
		{name: "auth-secret-unusable", reason: "InvalidAnnotation",
			manifests: badService +
				secret("nokey", map[string]string{"users": "foo:{PLAIN}bar\n"}) + annotated("bad", basic("nokey"), rule) +
				secret("nul", map[string]string{"auth": "foo:{PLAIN}bar\x00\n"}) +
				annotated("bad2", basic("nul"), simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")) +
				secret("lines", map[string]string{"foo": "{PLAIN}bar\nadmin:{PLAIN}x"}) +
				annotated("bad3", basic("lines")+`, nginx.ingress.kubernetes.io/auth-secret-type: auth-map`, simpleRule("bad3.example.com", "/", "Prefix", "bad", "{number: 80}")) +
				// musl's crypt("password", "\x80x"): not UTF-8.
				secret("latin", map[string]string{"auth": "foo:\x80xF6NQoyblqO6\n"}) +
				annotated("bad4", basic("latin"), simpleRule("bad4.example.com", "/", "Prefix", "bad", "{number: 80}")) +
				secret("latinmap", map[string]string{"foo": "\x80xF6NQoyblqO6"}) +
				annotated("bad5", basic("latinmap")+`, nginx.ingress.kubernetes.io/auth-secret-type: auth-map`, simpleRule("bad5.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				for _, host := range []string{"bad.example.com", "bad2.example.com", "bad3.example.com", "bad4.example.com", "bad5.example.com"} {
					routeAnswers(host, 503)(t, res)
				}
			}},
		{name: "auth-type-digest", reason: "AnnotationRefused",
			manifests: badService + users + annotated("bad", `nginx.ingress.kubernetes.io/auth-type: digest, nginx.ingress.kubernetes.io/auth-secret: users`, rule),
			check:     denied},
		{name: "auth-values-unparsable", reason: "AnnotationRefused",
			manifests: badService + users +
				annotated("bad", `nginx.ingress.kubernetes.io/auth-type: "Basic", nginx.ingress.kubernetes.io/auth-secret: users`, rule) +
				annotated("bad2", basic("a/b/c"), simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")) +
				annotated("bad3", basic("users")+`, nginx.ingress.kubernetes.io/auth-secret-type: htpasswd`, simpleRule("bad3.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				for _, host := range []string{"bad.example.com", "bad2.example.com", "bad3.example.com"} {
					routeAnswers(host, 503)(t, res)
				}
			}},
		{name: "auth-realm-hostile", reason: "InvalidAnnotation",
			manifests: badService + users + annotated("bad", basic("users")+`, nginx.ingress.kubernetes.io/auth-realm: "x\"\r\nSet-Cookie: a=b"`, rule),
			check:     asksAuthz("bad.example.com")},
		{name: "auth-hash-unverifiable", reason: "InvalidAnnotation",
			manifests: badService + secret("legacy", map[string]string{"auth": "des:abccBcrPOxnLU\nnone:\nfoo:{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=\n" +
				"three:$3$abcdefghij\nshort:abccBcrPOxnLV\nzero:_....rasm3kk6ykRwAfc\nx2:$2x$05$abcdefghijklmnopqrstuuZFBUbfXoM8LFiPx8LYlO/sXZB/Cwk3K\n" +
				"bsdi:_J9..rasm3kk6ykRwAfc\n"}) +
				annotated("bad", basic("legacy"), rule),
			check: func(t *testing.T, res *translate.Result) {
				asksAuthz("bad.example.com")(t, res)
				reported := false
				for _, p := range res.Problems {
					if p.Name != "bad" || !strings.Contains(p.Message, "log in as") {
						continue
					}
					reported = true
					// The DES crypt users (crypt("pass", "ab"), BSDi's
					// crypt("test", "_J9..rasm")) can log in: not reported;
					// each of the others is.
					if strings.Contains(p.Message, `"des"`) || strings.Contains(p.Message, `"bsdi"`) {
						t.Errorf("a DES crypt user is reported: %s", p.Message)
					}
					for _, u := range []string{`"none"`, `"three"`, `"short"`, `"zero"`, `"x2"`} {
						if !strings.Contains(p.Message, u) {
							t.Errorf("user %s is not reported: %s", u, p.Message)
						}
					}
				}
				if !reported {
					t.Errorf("no problem names the users who cannot log in")
				}
			}},
		{name: "auth-secret-without-type", reason: "InvalidAnnotation",
			manifests: badService + users + annotated("bad", `nginx.ingress.kubernetes.io/auth-secret: users`, rule),
			check: func(t *testing.T, res *translate.Result) {
				vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com")
				if vh == nil || len(vh.Routes) == 0 || vh.Routes[0].GetRoute() == nil {
					t.Fatalf("bad.example.com is not forwarded, as ingress-nginx forwards it")
				}
			}},
	}
}

// asksAuthz checks that host's first route forwards after asking the
// authorisation service.
func asksAuthz(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		vh := vhostNamed(res, frontend.HTTPListenerName, host)
		if vh == nil || len(vh.Routes) == 0 {
			t.Fatalf("no routes for %s", host)
		}
		if vh.Routes[0].GetTypedPerFilterConfig()["envoy.filters.http.ext_authz"] == nil || vh.Routes[0].GetRoute() == nil {
			t.Fatalf("%s does not forward after asking the authorisation service: %v", host, vh.Routes[0])
		}
	}
}

package translate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// authTLSBadInputCases are the rows of docs/bad-input.md for the auth-tls
// keys and ssl-passthrough: a client certificate check that cannot be made
// as asked refuses the Ingress (its paths answer 503), never serves it
// without the check; keys that only shape the answer are reported and not
// applied.
func authTLSBadInputCases() []badInputCase {
	rule := "  tls: [{hosts: [bad.example.com], secretName: good-cert}]\n" + simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	secret := func(name, data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: default}\ndata: {" + data + "}\n---\n"
	}
	withSecret := func(name, more string) string {
		return `nginx.ingress.kubernetes.io/auth-tls-secret: "` + name + `"` + more
	}
	refused := routeAnswers("bad.example.com", 503)
	ca := secret("client-ca", "ca.crt: "+testdataCA())
	return []badInputCase{
		{name: "auth-tls-secret-missing", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", withSecret("default/nowhere", ""), rule), check: refused},
		{name: "auth-tls-secret-other-namespace", reason: "AnnotationRefused",
			manifests: badService + secret("ca", "ca.crt: Z2FyYmFnZQ==") + annotated("bad", withSecret("kube-system/ca", ""), rule), check: refused},
		{name: "auth-tls-ca-garbage", reason: "AnnotationRefused",
			manifests: badService + secret("ca", "ca.crt: Z2FyYmFnZQ==") + annotated("bad", withSecret("default/ca", ""), rule), check: refused},
		{name: "auth-tls-values-unparsable", reason: "AnnotationRefused",
			manifests: badService + annotated("bad", withSecret("just-a-name", `, nginx.ingress.kubernetes.io/auth-tls-verify-client: "maybe", nginx.ingress.kubernetes.io/auth-tls-verify-depth: "-1", nginx.ingress.kubernetes.io/auth-tls-match-cn: "authtls"`), rule),
			check:     refused},
		// RE2 has no look-behind: the subject check cannot be made.
		{name: "auth-tls-match-cn-pcre", reason: "AnnotationRefused",
			manifests: badService + ca + annotated("bad", withSecret("default/client-ca", `, nginx.ingress.kubernetes.io/auth-tls-match-cn: "CN=(?<=x)y"`), rule), check: refused},
		{name: "auth-tls-error-page-internal", reason: "InvalidAnnotation",
			manifests: badService + ca + annotated("bad", withSecret("default/client-ca", `, nginx.ingress.kubernetes.io/auth-tls-error-page: "/error", nginx.ingress.kubernetes.io/auth-tls-pass-certificate-to-upstream: "yes"`), rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				vh := vhostNamed(res, "https/bad.example.com", "bad.example.com")
				if vh == nil || len(vh.Routes) < 2 || vh.Routes[0].GetDirectResponse().GetStatus() != 400 {
					t.Errorf("the certificate checks do not answer 400: %v", vh)
				}
			}},
		{name: "ssl-passthrough-without-root", reason: "PassthroughIgnored",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/ssl-passthrough: "true"`, simpleRule("bad.example.com", "/api", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				if vhostNamed(res, frontend.HTTPListenerName, "bad.example.com") == nil {
					t.Error("the host is not served over HTTP")
				}
			}},
	}
}

// testdataCA is the base64 ca.crt of the golden case authtls, a CA bundle
// that loads.
func testdataCA() string {
	b, err := os.ReadFile(filepath.Join("testdata", "authtls.yaml"))
	if err != nil {
		panic(err)
	}
	return regexp.MustCompile(`ca\.crt: (\S+)`).FindStringSubmatch(string(b))[1]
}

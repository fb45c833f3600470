package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// upstreamBadInputCases are the rows of docs/bad-input.md for
// ingress-nginx's upstream keys: a value that does not parse is reported
// and not applied; a Secret that verification or a client certificate
// needs and cannot be had makes the routes answer 503 (fail closed, as
// ingress-nginx denies the location), never a connection without it.
func upstreamBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	secret := func(name, data string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: " + name + ", namespace: default}\ndata: {" + data + "}\n---\n"
	}
	verified := func(secretName string) string {
		return `nginx.ingress.kubernetes.io/backend-protocol: HTTPS, nginx.ingress.kubernetes.io/proxy-ssl-verify: "on", nginx.ingress.kubernetes.io/proxy-ssl-secret: "` + secretName + `"`
	}
	return []badInputCase{
		{name: "upstream-values-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/backend-protocol: SPDY, nginx.ingress.kubernetes.io/load-balance: least_conn, nginx.ingress.kubernetes.io/service-upstream: "maybe", nginx.ingress.kubernetes.io/upstream-vhost: "a b/c", nginx.ingress.kubernetes.io/upstream-hash-by-subset-size: "0"`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "upstream-hash-unknown-variable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/upstream-hash-by: "$request_id"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/upstream-hash-by: "user-$host"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				plainRoute("bad.example.com")(t, res)
				if ra := vhostNamed(res, frontend.HTTPListenerName, "bad2.example.com").GetRoutes()[0].GetRoute(); ra.GetCluster() != "default/bad/80" || len(ra.HashPolicy) != 0 {
					t.Errorf("literal text in upstream-hash-by was applied: %v", ra)
				}
			}},
		{name: "proxy-ssl-values-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/proxy-ssl-verify: "yes", nginx.ingress.kubernetes.io/proxy-ssl-verify-depth: "-1", nginx.ingress.kubernetes.io/proxy-ssl-ciphers: "HIGH:!aNULL", nginx.ingress.kubernetes.io/proxy-ssl-protocols: "SSLv3", nginx.ingress.kubernetes.io/proxy-ssl-name: "not a name", nginx.ingress.kubernetes.io/proxy-ssl-server-name: "yes"`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "proxy-ssl-secret-missing", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", verified("default/nowhere"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "proxy-ssl-secret-other-namespace", reason: "InvalidAnnotation",
			manifests: badService + secret("ca", "ca.crt: Z2FyYmFnZQ==") + annotated("bad", verified("kube-system/ca"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "proxy-ssl-secret-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", verified("just-a-name"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "proxy-ssl-ca-garbage", reason: "InvalidAnnotation",
			manifests: badService + secret("ca", "ca.crt: Z2FyYmFnZQ==") + annotated("bad", verified("default/ca"), rule),
			check:     routeAnswers("bad.example.com", 503)},
		{name: "backend-protocol-fcgi", reason: "UnsupportedAnnotationValue",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/backend-protocol: FCGI`, rule),
			check:     routeAnswers("bad.example.com", 503)},
	}
}

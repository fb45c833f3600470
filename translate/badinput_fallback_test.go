package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
)

// fallbackBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// default-backend: a value ingress-nginx would not apply, or a Service it
// could not fall back to, is reported and not applied, and the route sends
// to its own Service's cluster alone (no aggregate).
func fallbackBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	external := "apiVersion: v1\nkind: Service\nmetadata: {name: elsewhere, namespace: default}\nspec: {type: ExternalName, externalName: errors.example.net}\n---\n"
	return []badInputCase{
		{name: "default-backend-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: "kube-system/errors"`, rule) +
				annotated("bad2", `nginx.ingress.kubernetes.io/default-backend: "Errors_Page\r\nX-Injected: 1"`, simpleRule("bad2.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				plainRoute("bad.example.com")(t, res)
				plainRoute("bad2.example.com")(t, res)
			}},
		{name: "default-backend-missing", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: nosuch`, rule),
			check:     plainRoute("bad.example.com")},
		{name: "default-backend-external-name", reason: "InvalidAnnotation",
			manifests: badService + external + annotated("bad", `nginx.ingress.kubernetes.io/default-backend: elsewhere`, rule),
			check:     plainRoute("bad.example.com")},
	}
}

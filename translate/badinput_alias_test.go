package translate_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// aliasBadInputCases are the rows of docs/bad-input.md for server-alias.
func aliasBadInputCases() []badInputCase {
	return []badInputCase{
		{name: "server-alias-not-a-name", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/server-alias: "good.example.com, ~^www\\d+\\.example\\.com$"`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				if vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com"); len(vh.GetDomains()) != 1 {
					t.Errorf("domains %v: the alias list was applied", vh.GetDomains())
				}
			}},
		// good.example.com is the healthy Ingress's host (TestBadInput's
		// other Ingress): as an alias it is left out, and the good host's
		// own routes are checked unchanged by TestBadInput itself.
		{name: "server-alias-of-another-host", reason: "",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/server-alias: good.example.com`, simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				if vh := vhostNamed(res, frontend.HTTPListenerName, "bad.example.com"); len(vh.GetDomains()) != 1 {
					t.Errorf("domains %v: another host's name became an alias", vh.GetDomains())
				}
			}},
	}
}

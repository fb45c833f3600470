package translate_test

import (
	"fmt"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// mirrorBadInputCases are the rows of docs/bad-input.md for the mirror
// keys: a target that is no plain http or https URL, or that is local, is
// reported and not applied, as is any target without
// --enable-external-name; nothing of the value reaches Envoy, and the
// route is served as without it.
func mirrorBadInputCases() []badInputCase {
	several := func(values ...string) string {
		s := badService
		for i, v := range values {
			name := "bad"
			if i > 0 {
				name = fmt.Sprintf("bad%d", i+1)
			}
			s += annotated(name, v, simpleRule(name+".example.com", "/", "Prefix", "bad", "{number: 80}"))
		}
		return s
	}
	return []badInputCase{
		{name: "mirror-target-unparsable", reason: "InvalidAnnotation",
			manifests: several(
				`nginx.ingress.kubernetes.io/mirror-target: "http://user:secret@test.example.com/", nginx.ingress.kubernetes.io/mirror-host: "a b", nginx.ingress.kubernetes.io/mirror-request-body: "maybe"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://test.example.com/\r\nX-Injected: 1"`,
				`nginx.ingress.kubernetes.io/mirror-target: "https://test.example.com/$host$request_uri"`,
				`nginx.ingress.kubernetes.io/mirror-target: "ftp://test.example.com/"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://test.example.com/m?a=b"`),
			check: noMirror("bad.example.com", "bad2.example.com", "bad3.example.com", "bad4.example.com", "bad5.example.com")},
		{name: "mirror-target-local", reason: "InvalidAnnotation",
			manifests: several(
				`nginx.ingress.kubernetes.io/mirror-target: "http://127.0.0.1:9901/$request_uri"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://localhost/mirror"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://169.254.169.254/latest"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://[::ffff:127.0.0.1]/"`,
				`nginx.ingress.kubernetes.io/mirror-target: "http://0.0.0.0/"`),
			check: noMirror("bad.example.com", "bad2.example.com", "bad3.example.com", "bad4.example.com", "bad5.example.com")},
		{name: "mirror-target-disabled", reason: "MirrorRefused",
			manifests: several(`nginx.ingress.kubernetes.io/mirror-target: "https://test.example.com$request_uri"`),
			check:     noMirror("bad.example.com")},
	}
}

// noMirror checks that each host's one route forwards to its Service and
// copies nothing, and that no cluster beyond the Services' is made.
func noMirror(hosts ...string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		for _, host := range hosts {
			vh := vhostNamed(res, frontend.HTTPListenerName, host)
			if vh == nil || len(vh.GetRoutes()) != 1 || vh.GetRoutes()[0].GetRoute().GetCluster() == "" {
				t.Fatalf("%s is not forwarded to its Service: %v", host, vh)
			}
			if m := vh.GetRoutes()[0].GetRoute().GetRequestMirrorPolicies(); len(m) != 0 {
				t.Errorf("%s: a mirror target that is refused was applied: %v", host, m)
			}
		}
		for _, c := range res.Resources.Clusters {
			if name := c.GetName(); len(name) > 7 && name[:7] == "mirror/" {
				t.Errorf("a cluster for a refused mirror target: %s", name)
			}
		}
	}
}

package translate_test

import (
	"strings"
	"testing"

	statefulv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	cookiev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/cookie/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/type/http/v3"

	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
)

// affinityBadInputCases are the rows of docs/bad-input.md for ingress-nginx's
// session affinity keys: a value ingress-nginx would not apply is reported
// and not applied (the cookie keeps ingress-nginx's defaults), and nothing
// of it reaches the Set-Cookie Envoy writes.
func affinityBadInputCases() []badInputCase {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	return []badInputCase{
		{name: "affinity-cookie-unparsable", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-name: "a\r\nSet-Cookie: evil=1", `+
				`nginx.ingress.kubernetes.io/session-cookie-path: "/a; Domain=evil.example", nginx.ingress.kubernetes.io/session-cookie-domain: "evil.example\r\nX-Injected: 1", `+
				`nginx.ingress.kubernetes.io/session-cookie-max-age: "abc", nginx.ingress.kubernetes.io/session-cookie-expires: "-1", nginx.ingress.kubernetes.io/session-cookie-samesite: sometimes`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				cookie := sessionCookie(t, res, "bad.example.com")
				if cookie == nil {
					t.Fatal("affinity: cookie was not applied")
				}
				if cookie.GetName() != "INGRESSCOOKIE" || cookie.GetPath() != "/" || len(cookie.GetAttributes()) != 0 || cookie.GetTtl().AsDuration() != 0 {
					t.Errorf("values that do not parse were applied: %v", cookie)
				}
				if strings.Contains(cookie.String(), "evil") {
					t.Errorf("an injected attribute reached the cookie: %v", cookie)
				}
			}},
		{name: "affinity-kind-unknown", reason: "InvalidAnnotation",
			manifests: badService + annotated("bad", `nginx.ingress.kubernetes.io/affinity: ip, nginx.ingress.kubernetes.io/session-cookie-name: SERVERID`, rule),
			check: func(t *testing.T, res *translate.Result) {
				t.Helper()
				if cookie := sessionCookie(t, res, "bad.example.com"); cookie != nil {
					t.Errorf("affinity %q was applied: %v", "ip", cookie)
				}
			}},
	}
}

// sessionCookie is the session cookie of host's first HTTP route, nil when
// it has none.
func sessionCookie(t *testing.T, res *translate.Result, host string) *httpv3.Cookie {
	t.Helper()
	vh := vhostNamed(res, frontend.HTTPListenerName, host)
	if vh == nil || len(vh.GetRoutes()) == 0 {
		t.Fatalf("%s is not served: %v", host, vh)
	}
	raw := vh.GetRoutes()[0].GetTypedPerFilterConfig()["envoy.filters.http.stateful_session"]
	if raw == nil {
		return nil
	}
	var per statefulv3.StatefulSessionPerRoute
	if err := raw.UnmarshalTo(&per); err != nil {
		t.Fatal(err)
	}
	var state cookiev3.CookieBasedSessionState
	if err := per.GetStatefulSession().GetSessionState().GetTypedConfig().UnmarshalTo(&state); err != nil {
		t.Fatal(err)
	}
	return state.GetCookie()
}

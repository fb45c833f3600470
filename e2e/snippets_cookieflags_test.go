package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestSnippetsCookieFlags proves a configuration-snippet's
// proxy_cookie_flags through a real Envoy against what nginx does with
// the backend's Set-Cookie lines. ingress-nginx has no test of the
// directive; the expectations are nginx's documentation
// (https://nginx.org/en/docs/http/ngx_http_proxy_module.html#proxy_cookie_flags:
// the first matching directive applies, secure/httponly/samesite=...
// add a flag, nosecure/nohttponly/nosamesite remove it) and its code at
// release-1.27.1, src/http/modules/ngx_http_proxy_module.c:
// ngx_http_proxy_parse_cookie splits the cookie at ";" and trims the
// spaces, ngx_http_proxy_rewrite_cookie_flags compares a name in any case
// and leaves a cookie no directive matches as it was sent,
// ngx_http_proxy_edit_cookie_flags rewrites a SameSite of another value
// as SameSite=<Value>, keeps a flag already there and appends Secure,
// HttpOnly and SameSite in that order, and ngx_http_proxy_rewrite_cookie
// writes an edited cookie again with "; " between its attributes. A
// cookie whose first attribute has no "=" is left alone, and the session
// cookie of affinity, which ingress-nginx's Lua balancer sets and not
// the backend, is not edited (ngx_http_upstream_rewrite_set_cookie runs
// on the upstream's headers alone).
func TestSnippetsCookieFlags(t *testing.T) {
	framework.Heavy(t)
	framework.FindTools(t)
	envoy := startHandlerEnvoy(t, "cookies", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Backend", "cookies")
		for _, c := range []string{
			"a=1",
			"b=2; samesite=Strict; httponly",
			"c = 3 ;Path=/",
			"SID=4; Path=/; secure; HttpOnly",
			"pref_lang=en; SameSite=Lax",
			"other=5;Path=/x",
			"novalue; Path=/",
		} {
			h.Add("Set-Cookie", c)
		}
		w.WriteHeader(http.StatusOK)
	}, cookieFlagsIngressesYAML)
	cookies := func(t *testing.T, host string) []string {
		t.Helper()
		var got []string
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			a := snippetRequest(t, envoy, http.MethodGet, host, "/", nil)
			if a.status != http.StatusOK || a.header.Get("X-Backend") != "cookies" {
				return fmt.Errorf("GET %s: status %d from %q, want 200 from the backend", host, a.status, a.header.Get("X-Backend"))
			}
			got = a.header.Values("Set-Cookie")
			return nil
		})
		return got
	}

	// The corpus's snippet: "~" alone matches every cookie.
	t.Run("every cookie gets secure httponly samesite=lax", func(t *testing.T) {
		got := cookies(t, "all.cookies.test")
		var session []string
		got = slices.DeleteFunc(got, func(c string) bool {
			if strings.HasPrefix(c, "INGRESSCOOKIE=") {
				session = append(session, c)
				return true
			}
			return false
		})
		want := []string{
			"a=1; Secure; HttpOnly; SameSite=Lax",
			"b=2; SameSite=Lax; httponly; Secure",
			"c=3; Path=/; Secure; HttpOnly; SameSite=Lax",
			"SID=4; Path=/; secure; HttpOnly; SameSite=Lax",
			"pref_lang=en; SameSite=Lax; Secure; HttpOnly",
			"other=5; Path=/x; Secure; HttpOnly; SameSite=Lax",
			"novalue; Path=/",
		}
		if !slices.Equal(got, want) {
			t.Errorf("Set-Cookie\n got %q\nwant %q", got, want)
		}
		if len(session) != 1 || strings.Contains(session[0], "Secure") || strings.Contains(session[0], "SameSite=Lax") {
			t.Errorf("affinity's Set-Cookie %q: want one, without the flags proxy_cookie_flags adds to the backend's", session)
		}
	})
	// Names: SID matches "sid" in any case (and loses its flags), pref_lang
	// the expression ^pref_; the rest match neither and pass as sent.
	t.Run("matching names are edited, the others pass as sent", func(t *testing.T) {
		got := cookies(t, "named.cookies.test")
		want := []string{
			"a=1",
			"b=2; samesite=Strict; httponly",
			"c = 3 ;Path=/",
			"SID=4; Path=/",
			"pref_lang=en; SameSite=None; Secure",
			"other=5;Path=/x",
			"novalue; Path=/",
		}
		if !slices.Equal(got, want) {
			t.Errorf("Set-Cookie\n got %q\nwant %q", got, want)
		}
	})
	// With proxy-cookie-path on the same route (one response rewrite):
	// nginx rewrites the path first, then the flags, and writes a cookie
	// either changed again from its attributes; one whose first
	// attribute has no "=" is changed by neither.
	t.Run("the path is rewritten, then the flags", func(t *testing.T) {
		got := cookies(t, "path.cookies.test")
		want := []string{
			"a=1",
			"b=2; samesite=Strict; httponly",
			"c=3; Path=/app/",
			"SID=4; Path=/app/; secure; HttpOnly; SameSite=Strict",
			"pref_lang=en; SameSite=Lax",
			"other=5; Path=/app/x",
			"novalue; Path=/",
		}
		if !slices.Equal(got, want) {
			t.Errorf("Set-Cookie\n got %q\nwant %q", got, want)
		}
	})
}

const cookieFlagsIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: all
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/affinity: cookie
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_cookie_flags ~ secure httponly samesite=lax;
spec:
  rules:
  - host: all.cookies.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: cookies, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: named
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_cookie_flags sid nosecure nohttponly;
      proxy_cookie_flags ~^pref_ samesite=none secure;
spec:
  rules:
  - host: named.cookies.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: cookies, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: path
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/proxy-cookie-path: / /app/
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_cookie_flags ~^sid$ samesite=strict;
spec:
  rules:
  - host: path.cookies.test
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: cookies, port: {number: 80}}}}]}
`

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestCORSAnnotations checks ingress-nginx's CORS keys through a real
// Envoy, by the headers a client gets. Each scenario names the test of
// ingress-nginx's test/e2e/annotations/cors.go it mirrors, or the part of
// its template (rootfs/etc/nginx/template/nginx.tmpl, define "CORS") or of
// its other tests (auth.go: CORS headers on a 401) it follows where
// cors.go only reads nginx.conf.
func TestCORSAnnotations(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha) + notReadyServiceYAML("down", alpha)},
		manifest{"ingresses.yaml", corsIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	for _, host := range []string{"cors.example.com", "custom.example.com", "listed.example.com", "wild.example.com", "schemes.example.com", "star.example.com", "blank.example.com", "commas.example.com", "limited.example.com", "plain.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	ask := func(t *testing.T, method, host, origin string) corsAnswer {
		t.Helper()
		return corsRequest(t, envoy, method, host, "/", origin, nil)
	}

	// cors.go "should enable cors" and "should not break functionality -
	// without `*`": ingress-nginx's defaults, and "*" even without an
	// Origin header.
	defaults := map[string]string{
		"Access-Control-Allow-Origin":      "*",
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Allow-Methods":     "GET, PUT, POST, DELETE, PATCH, OPTIONS",
		"Access-Control-Allow-Headers":     "DNT,Keep-Alive,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,Content-Type,Range,Authorization",
		"Access-Control-Max-Age":           "1728000",
		"Access-Control-Expose-Headers":    "",
	}
	t.Run("enable-cors alone: the defaults, without an Origin too", func(t *testing.T) {
		for _, origin := range []string{"", "https://anyone.example.net"} {
			a := ask(t, http.MethodGet, "cors.example.com", origin)
			a.expect(t, http.StatusOK, "alpha", defaults)
		}
	})

	// Without the annotation, no CORS header at all: they are its doing.
	t.Run("without enable-cors, no CORS header", func(t *testing.T) {
		a := ask(t, http.MethodGet, "plain.example.com", "https://anyone.example.net")
		a.expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Max-Age": ""})
	})

	// cors.go "should set cors methods to only allow POST, GET", "should
	// set cors max-age", "should allow headers for cors", "should expose
	// headers for cors", "should disable cors allow credentials": each
	// value as written.
	t.Run("the values as written", func(t *testing.T) {
		a := ask(t, http.MethodGet, "custom.example.com", "")
		a.expect(t, http.StatusOK, "alpha", map[string]string{
			"Access-Control-Allow-Origin":      "*",
			"Access-Control-Allow-Methods":     "POST, GET",
			"Access-Control-Max-Age":           "200",
			"Access-Control-Allow-Headers":     "DNT, User-Agent",
			"Access-Control-Expose-Headers":    "X-CustomResponseHeader, X-CustomSecondHeader",
			"Access-Control-Allow-Credentials": "",
		})
	})

	// The template's "if ($request_method = 'OPTIONS') ... return 204":
	// any OPTIONS, a preflight or not, is answered 204 with the headers,
	// and the backend never sees it.
	t.Run("any OPTIONS is answered 204 without the backend", func(t *testing.T) {
		for _, preflight := range []bool{false, true} {
			var extra map[string]string
			if preflight {
				extra = map[string]string{"Access-Control-Request-Method": "PUT"}
			}
			a := corsRequest(t, envoy, http.MethodOptions, "cors.example.com", "/anything", "https://anyone.example.net", extra)
			a.expect(t, http.StatusNoContent, "", defaults)
			if a.body != "" {
				t.Errorf("OPTIONS: a body %q", a.body)
			}
		}
	})

	// More_set_headers replaces the backend's own header.
	t.Run("the backend's own CORS headers are replaced", func(t *testing.T) {
		a := corsRequest(t, envoy, http.MethodGet, "cors.example.com", "/?header=Access-Control-Allow-Origin:https://backend.example", "", nil)
		a.expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "*"})
		if n := len(a.header.Values("Access-Control-Allow-Origin")); n != 1 {
			t.Errorf("%d Access-Control-Allow-Origin headers, want 1", n)
		}
	})

	// auth.go "should return status code 401 when authentication is
	// configured but Authorization header is not configured" checks
	// Access-Control-Allow-Origin: * on nginx's own 401: more_set_headers
	// sets the headers on every response, nginx's own included. Here:
	// Envoy's own answers, a filter's 413 (proxy-body-size) and the
	// router's 503 (no ready endpoint).
	t.Run("the headers are on Envoy's own answers", func(t *testing.T) {
		big := strings.Repeat("x", 4096)
		a := corsRequestBody(t, envoy, http.MethodPost, "limited.example.com", "/", "", nil, big)
		a.expect(t, http.StatusRequestEntityTooLarge, "", defaults)
		a = ask(t, http.MethodGet, "down.example.com", "")
		a.expect(t, http.StatusServiceUnavailable, "", defaults)
		// The preflight comes before the body bound, as in nginx.
		a = corsRequestBody(t, envoy, http.MethodOptions, "limited.example.com", "/", "", nil, big)
		a.expect(t, http.StatusNoContent, "", defaults)
	})

	// auth.go "should return status code 401 when authentication is
	// configured but Authorization header is not configured", with
	// enable-cors: the 401 carries Access-Control-Allow-Origin: *. With
	// the credentials, the backend answers, with the headers; an OPTIONS
	// needs none (nginx answers it before its access phase).
	t.Run("basic authentication's 401 carries the headers", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "guarded.example.com asks for credentials", func() error {
			return envoy.Expect("guarded.example.com", "/", http.StatusUnauthorized, "")
		})
		a := ask(t, http.MethodGet, "guarded.example.com", "")
		a.expect(t, http.StatusUnauthorized, "", defaults)
		a = corsRequest(t, envoy, http.MethodGet, "guarded.example.com", "/", "", map[string]string{"Authorization": "Basic Zm9vOmJhcg=="})
		a.expect(t, http.StatusOK, "alpha", defaults)
		a = ask(t, http.MethodOptions, "guarded.example.com", "https://anyone.example.net")
		a.expect(t, http.StatusNoContent, "", defaults)
	})

	// The template: the CORS block is in nginx's rewrite phase, the
	// allow and deny rules in its access phase. A client outside
	// allowlist-source-range gets the 403 with the headers (more_set_headers
	// sets them on every response), and its OPTIONS the 204 (ipallowlist.go
	// checks only nginx.conf).
	t.Run("a client refused by its address: a 403 with the headers, its OPTIONS a 204", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "fenced.example.com refuses this client", func() error {
			return envoy.Expect("fenced.example.com", "/", http.StatusForbidden, "")
		})
		ask(t, http.MethodGet, "fenced.example.com", "").expect(t, http.StatusForbidden, "", defaults)
		ask(t, http.MethodOptions, "fenced.example.com", "https://anyone.example.net").expect(t, http.StatusNoContent, "", defaults)
	})

	// cors.go "should allow origin for cors", "should allow - single
	// origin for multiple cors values", "should not allow - single origin
	// for multiple cors values", "should not match", "should allow -
	// single origin with required port", "should not allow - single
	// origin with port and origin without port", "should not allow -
	// single origin without port and origin with required port", "should
	// allow correct origins - single origin for multiple cors values" (an
	// entry without a scheme never matches).
	t.Run("a list of origins: exact scheme, host and port, echoed", func(t *testing.T) {
		for _, tc := range []struct {
			origin  string
			allowed bool
		}{
			{"https://origin.cors.com:8080", true},
			{"https://origin2.cors.com", true},
			{"http://origin.com:8080", true},
			// In any case, echoed as sent (nginx's ~*).
			{"HTTPS://Origin2.Cors.Com", true},
			{"http://no.origin.com", false},
			{"https://fooxorigin2.cors.com", false},
			{"http://origin.com", false},
			{"https://origin.cors.com", false},
			{"http://origin.cors.com:8080", false},
			{"origin.cors.com:8080", false},
			{"https://origin2.cors.com.evil.example", false},
			{"", false},
		} {
			a := ask(t, http.MethodGet, "listed.example.com", tc.origin)
			want := map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": "", "Access-Control-Max-Age": ""}
			if tc.allowed {
				want = map[string]string{"Access-Control-Allow-Origin": tc.origin, "Access-Control-Allow-Credentials": "true",
					"Access-Control-Allow-Methods": defaults["Access-Control-Allow-Methods"], "Access-Control-Max-Age": "1728000"}
			}
			// Allowed or not, the request is served.
			a.expect(t, http.StatusOK, "alpha", want)
		}
	})

	// The template: an OPTIONS from an origin not allowed leaves $cors
	// "options", never "trueoptions": nginx proxies it.
	t.Run("OPTIONS from an origin not allowed reaches the backend", func(t *testing.T) {
		a := ask(t, http.MethodOptions, "listed.example.com", "https://other.example.net")
		a.expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": ""})
		a = ask(t, http.MethodOptions, "listed.example.com", "https://origin2.cors.com")
		a.expect(t, http.StatusNoContent, "", map[string]string{"Access-Control-Allow-Origin": "https://origin2.cors.com"})
	})

	// cors.go "should allow - matching origin with wildcard origin (2
	// subdomains)", "should not allow - unmatching origin with wildcard
	// origin (2 subdomains)", "should allow - matching origin+port with
	// wildcard origin", "should not allow - portless origin with wildcard
	// origin", "should allow correct origins - missing subdomain + origin
	// with wildcard origin and correct origin": "*." is one label.
	t.Run("a wildcard covers one label", func(t *testing.T) {
		for _, tc := range []struct {
			origin  string
			allowed bool
		}{
			{"http://foo.origin.cors.com", true},
			{"http://bar-foo.origin.cors.com", true},
			{"http://abc.origin.com:8080", true},
			{"http://bar.foo.origin.cors.com", false},
			{"http://origin.cors.com", false},
			{"http://abc.origin.com", false},
			{"http://origin.com:8080", false},
		} {
			a := ask(t, http.MethodGet, "wild.example.com", tc.origin)
			want := ""
			if tc.allowed {
				want = tc.origin
			}
			a.expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": want})
		}
	})

	// cors.go "should allow - origins with non-http[s] protocols".
	t.Run("other schemes", func(t *testing.T) {
		for _, origin := range []string{"test://localhost", "tauri://localhost:3000"} {
			ask(t, http.MethodGet, "schemes.example.com", origin).expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": origin})
		}
	})

	// cors.go "should not break functionality" ("*"), "should not break
	// functionality with extra domain" ("*, foo.bar.com"), "should allow -
	// missing origins (should allow all origins)" (blank): "*".
	t.Run("* anywhere, or a blank list, is *", func(t *testing.T) {
		for _, host := range []string{"star.example.com", "blank.example.com"} {
			for _, origin := range []string{"", "http://origin.com", "test.origin.com"} {
				ask(t, http.MethodGet, host, origin).expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "*"})
			}
		}
	})

	// cors.go "should allow correct origin but not others - cors allow
	// origin annotations contain trailing comma".
	t.Run("empty entries are ignored", func(t *testing.T) {
		for _, tc := range []struct{ origin, want string }{
			{"https://origin-123.cors.com:8080", "https://origin-123.cors.com:8080"},
			{"https://origin-321.cors.com:8080", "https://origin-321.cors.com:8080"},
			{"https://unknown.cors.com:8080", ""},
		} {
			ask(t, http.MethodGet, "commas.example.com", tc.origin).expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": tc.want})
		}
	})
}

// corsAnswer is what a request got: its status, the echo backend that
// answered ("" for Envoy), its header and body.
type corsAnswer struct {
	what    string
	status  int
	backend string
	header  http.Header
	body    string
}

// expect checks the status, who answered, and headers: each name's value,
// "" for a header that must be absent.
func (a corsAnswer) expect(t *testing.T, status int, backend string, headers map[string]string) {
	t.Helper()
	if a.status != status || a.backend != backend {
		t.Errorf("%s: %d from %q, want %d from %q", a.what, a.status, a.backend, status, backend)
	}
	for name, want := range headers {
		got := strings.Join(a.header.Values(name), ", ")
		if got != want {
			t.Errorf("%s: %s %q, want %q", a.what, name, got, want)
		}
	}
}

func corsRequest(t *testing.T, envoy *framework.Envoy, method, host, path, origin string, extra map[string]string) corsAnswer {
	t.Helper()
	return corsRequestBody(t, envoy, method, host, path, origin, extra, "")
}

// corsRequestBody sends one request on a new connection, with an Origin
// header unless origin is empty.
func corsRequestBody(t *testing.T, envoy *framework.Envoy, method, host, path, origin string, extra map[string]string, body string) corsAnswer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	what := fmt.Sprintf("%s %s%s (Origin %q)", method, host, path, origin)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return corsAnswer{what: what, status: resp.StatusCode, backend: resp.Header.Get("X-Backend"), header: resp.Header, body: string(got)}
}

const corsIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: cors
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/enable-cors: "true"}
spec:
  rules:
  - host: cors.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: down.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: down, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: custom
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-methods: "POST, GET"
    nginx.ingress.kubernetes.io/cors-max-age: "200"
    nginx.ingress.kubernetes.io/cors-allow-headers: "DNT, User-Agent"
    nginx.ingress.kubernetes.io/cors-expose-headers: "X-CustomResponseHeader, X-CustomSecondHeader"
    nginx.ingress.kubernetes.io/cors-allow-credentials: "false"
spec:
  rules:
  - host: custom.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: listed
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "origin.cors.com:8080, https://origin.cors.com:8080, https://origin2.cors.com, http://origin.com:8080"
spec:
  rules:
  - host: listed.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: wild
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "http://*.origin.cors.com, http://*.origin.com:8080"
spec:
  rules:
  - host: wild.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: schemes
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "test://localhost, tauri://localhost:3000"
spec:
  rules:
  - host: schemes.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: star
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "*, foo.bar.com"
spec:
  rules:
  - host: star.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: blank
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "      "
spec:
  rules:
  - host: blank.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: commas
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/cors-allow-origin: "https://origin-123.cors.com:8080,   ,https://origin-321.cors.com:8080,"
spec:
  rules:
  - host: commas.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: limited
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/proxy-body-size: 1k
spec:
  rules:
  - host: limited.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: v1
kind: Secret
metadata: {name: basic-auth, namespace: default}
data:
  auth: Zm9vOntTSEF9WXMyM0FnLzVJT1dxWkN3OVFHYVZEZEh3SDAwPQo=
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: guarded
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/auth-type: basic
    nginx.ingress.kubernetes.io/auth-secret: basic-auth
spec:
  rules:
  - host: guarded.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: fenced
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/allowlist-source-range: "192.0.2.0/24"
spec:
  rules:
  - host: fenced.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: plain
  namespace: default
spec:
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

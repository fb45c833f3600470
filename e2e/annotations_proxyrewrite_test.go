package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestProxyRewriteAnnotations checks proxy-redirect-from/-to and
// proxy-cookie-domain/-path through a real Envoy, by the headers a client
// gets from a backend that names itself in them. ingress-nginx's own tests
// (test/e2e/annotations/proxy.go, "should set proxy_redirect to default",
// "should set proxy_redirect to hello.com goodbye.com" and "should set
// proxy_cookie_domain and proxy_cookie_path") only look for the directives
// in nginx.conf; what the client sees is what nginx's documentation of
// proxy_redirect, proxy_cookie_domain and proxy_cookie_path says.
func TestProxyRewriteAnnotations(t *testing.T) {
	framework.Heavy(t)
	framework.FindTools(t)
	// A backend whose answers name it as http://internal/, as a backend
	// that does not know the host it is served under does.
	envoy := startHandlerEnvoy(t, "internal", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Backend", "internal")
		h.Set("Location", "http://internal/foo/bar?x=1")
		h.Set("Refresh", "5; URL=http://internal/later")
		h.Add("Set-Cookie", "a=1; Domain=localhost; Path=/one/two")
		h.Add("Set-Cookie", "b=2; path=/one/; domain=.LOCALHOST; HttpOnly")
		h.Add("Set-Cookie", "c=3; Domain=other.example; Path=/elsewhere")
		w.WriteHeader(http.StatusFound)
	}, proxyRewriteIngressesYAML)
	get := func(host string) *http.Response {
		t.Helper()
		var resp *http.Response
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			req, _ := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/one/page", nil)
			req.Host = host
			r, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
			if err != nil {
				return err
			}
			r.Body.Close()
			if r.StatusCode != http.StatusFound || r.Header.Get("X-Backend") != "internal" {
				return fmt.Errorf("GET %s: status %d from %q, want 302 from internal", host, r.StatusCode, r.Header.Get("X-Backend"))
			}
			resp = r
			return nil
		})
		return resp
	}

	// nginx's proxy_redirect: the start of Location, and of a Refresh
	// header's url=, is replaced; the rest is kept.
	t.Run("proxy-redirect rewrites Location and Refresh", func(t *testing.T) {
		r := get("rewrite.example.com")
		if got, want := r.Header.Get("Location"), "https://rewrite.example.com/app/foo/bar?x=1"; got != want {
			t.Errorf("Location %q, want %q", got, want)
		}
		if got, want := r.Header.Get("Refresh"), "5; URL=https://rewrite.example.com/app/later"; got != want {
			t.Errorf("Refresh %q, want %q", got, want)
		}
	})
	// nginx's proxy_cookie_domain (the whole domain, in any case, a
	// leading dot kept) and proxy_cookie_path (the start of the path).
	t.Run("proxy-cookie-domain and -path rewrite Set-Cookie", func(t *testing.T) {
		r := get("rewrite.example.com")
		want := []string{
			"a=1; Domain=rewrite.example.com; Path=/two",
			"b=2; path=/; domain=.rewrite.example.com; HttpOnly",
			"c=3; Domain=other.example; Path=/elsewhere",
		}
		if got := r.Header.Values("Set-Cookie"); !slices.Equal(got, want) {
			t.Errorf("Set-Cookie %q, want %q", got, want)
		}
	})
	// ingress-nginx's default for all four is "off", and "default" names
	// its own proxy_pass URL: the backend's headers pass as they are.
	for _, host := range []string{"plain.example.com", "default.example.com"} {
		t.Run("untouched on "+host, func(t *testing.T) {
			r := get(host)
			if got, want := r.Header.Get("Location"), "http://internal/foo/bar?x=1"; got != want {
				t.Errorf("Location %q, want %q", got, want)
			}
			if got := r.Header.Values("Set-Cookie"); len(got) != 3 || got[0] != "a=1; Domain=localhost; Path=/one/two" {
				t.Errorf("Set-Cookie %q, want the backend's three as sent", got)
			}
		})
	}
}

const proxyRewriteIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rewrite
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/proxy-redirect-from: http://internal/
    nginx.ingress.kubernetes.io/proxy-redirect-to: https://rewrite.example.com/app/
    nginx.ingress.kubernetes.io/proxy-cookie-domain: localhost rewrite.example.com
    nginx.ingress.kubernetes.io/proxy-cookie-path: /one/ /
spec:
  rules:
  - host: rewrite.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: internal, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: internal, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: default
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/proxy-redirect-from: default
spec:
  rules:
  - host: default.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: internal, port: {number: 80}}}}]}
`

// BenchmarkProxyRewrite measures what the response rewrite (Envoy's Lua
// filter) costs a request: the same backend and response through a route
// with the four keys and through one without, one after the other on one
// Envoy, one keep-alive connection, requests one at a time. The
// difference of the two is the filter's; docs/benchmarks.md has figures.
func BenchmarkProxyRewrite(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Location", "http://internal/foo/bar?x=1")
		h.Add("Set-Cookie", "a=1; Domain=localhost; Path=/one/two")
		h.Add("Set-Cookie", "b=2; path=/one/; domain=.LOCALHOST; HttpOnly")
		w.WriteHeader(http.StatusFound)
	}))
	b.Cleanup(internal.Close)
	_, port, _ := net.SplitHostPort(internal.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	dir := b.TempDir()
	for name, content := range map[string]string{
		"services.yaml":  readyServiceYAML("internal", &framework.Backend{Name: "internal", Host: "127.0.0.1", Port: n}),
		"ingresses.yaml": proxyRewriteIngressesYAML,
	} {
		writeManifest(b, dir, name, content)
	}
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/one/page", host, nil, http.StatusFound, "")
		return err
	}
	framework.Eventually(b, convergeTimeout, "both hosts served", func() error {
		if err := get("plain.example.com"); err != nil {
			return err
		}
		return get("rewrite.example.com")
	})
	benchRounds(b, []string{"plain", "rewrite"}, func(name string) error { return get(name + ".example.com") })
}

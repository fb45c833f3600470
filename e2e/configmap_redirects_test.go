package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapRelativeRedirects: the ConfigMap's
// relative-redirects sends every permanent-redirect to a path as it is,
// as ingress-nginx's test/e2e/annotations/relativeredirects.go expects of
// the annotation, here for an Ingress without it and for one that sets
// it "false", which cannot undo nginx.tmpl's absolute_redirect off at the
// http level. Without the key, the Location is absolute again.
func TestControllerConfigMapRelativeRedirects(t *testing.T) {
	b := echoBackends(t, "echo")
	fm, configure := startConfigMapMode(t, map[string]string{"relative-redirects": "true"},
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"ingresses.yaml", redirectIngress("rr-absolute", "rr.foo.com", "/something", `permanent-redirect: "/new-location", relative-redirects: "false"`) +
			redirectIngress("rr-plain", "rr-plain.foo.com", "/something", `permanent-redirect: "/new-location"`)})
	framework.Eventually(t, convergeTimeout, "relative Locations", locations(fm.envoy, []redirect{
		{"rr.foo.com", "/something", http.StatusMovedPermanently, "/new-location"},
		{"rr-plain.foo.com", "/something", http.StatusMovedPermanently, "/new-location"},
	}))
	configure(nil)
	framework.Eventually(t, convergeTimeout, "absolute Locations without the key", locations(fm.envoy, []redirect{
		{"rr.foo.com", "/something", http.StatusMovedPermanently, "http://rr.foo.com/new-location"},
		{"rr-plain.foo.com", "/something", http.StatusMovedPermanently, "http://rr-plain.foo.com/new-location"},
	}))
}

// redirect is a request and the redirect it should get.
type redirect struct {
	host, path string
	status     int
	location   string
}

// locations checks each redirect through envoy.
func locations(envoy *framework.Envoy, want []redirect) func() error {
	return func() error {
		for _, w := range want {
			r, err := envoy.Get(w.host, w.path)
			if err != nil {
				return err
			}
			if r.Status != w.status || r.Header.Get("Location") != w.location {
				return fmt.Errorf("%s%s: %d, Location %q, want %d and %q", w.host, w.path, r.Status, r.Header.Get("Location"), w.status, w.location)
			}
		}
		return nil
	}
}

// snippetRedirectsIngress carries the redirects of a snippet that nginx
// makes absolute unless absolute_redirect is off: a return to a fixed
// path, a rewrite with a capture (the query kept), a server-snippet
// location's return, and a return to a URL with a scheme, which stays
// whole either way.
const snippetRedirectsIngress = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rr-snippets
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      if ($request_uri = /fixed) { return 301 /moved; }
      rewrite ^/images/(.*)$ /app/images/$1 redirect;
      if ($request_uri = /whole) { return 301 https://other.example.com/x; }
    nginx.ingress.kubernetes.io/server-snippet: |
      location = /server { return 308 /server-moved; }
spec:
  rules: [{host: rr-snippets.foo.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rr-annotated
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/relative-redirects: "true"
    nginx.ingress.kubernetes.io/configuration-snippet: |
      rewrite ^/old/(.*)$ /new/$1 permanent;
    nginx.ingress.kubernetes.io/server-snippet: |
      location = /server { return 308 /server-moved; }
spec:
  rules: [{host: rr-annotated.foo.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`

// TestSnippetRelativeRedirects: a snippet's redirect to a path is sent as
// nginx sends it, absolute (the request's scheme and host) unless
// absolute_redirect is off, which the ConfigMap's relative-redirects
// writes at the http level and an Ingress's relative-redirects annotation
// in its locations alone (nginx.tmpl: "absolute_redirect off" under
// $all.Cfg.RelativeRedirects and under $location.RelativeRedirects), so a
// server-snippet's location is relative under the first only. A URL with
// a scheme is sent whole either way (ngx_http_send_response,
// ngx_http_header_filter: only a Location starting with "/" is made
// absolute).
func TestSnippetRelativeRedirects(t *testing.T) {
	b := echoBackends(t, "echo")
	allow := map[string]string{"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"}
	relative := map[string]string{"relative-redirects": "true"}
	maps.Copy(relative, allow)
	fm, configure := startConfigMapMode(t, relative,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"ingresses.yaml", snippetRedirectsIngress})
	framework.Eventually(t, convergeTimeout, "relative Locations under the ConfigMap's key", locations(fm.envoy, []redirect{
		{"rr-snippets.foo.com", "/fixed", 301, "/moved"},
		{"rr-snippets.foo.com", "/images/a.png?size=2", 302, "/app/images/a.png?size=2"},
		{"rr-snippets.foo.com", "/server", 308, "/server-moved"},
		{"rr-snippets.foo.com", "/whole", 301, "https://other.example.com/x"},
		{"rr-annotated.foo.com", "/old/b?c=d", 301, "/new/b?c=d"},
		{"rr-annotated.foo.com", "/server", 308, "/server-moved"},
	}))
	configure(allow)
	framework.Eventually(t, convergeTimeout, "absolute Locations without it, but in the annotated Ingress's locations", locations(fm.envoy, []redirect{
		{"rr-snippets.foo.com", "/fixed", 301, "http://rr-snippets.foo.com/moved"},
		{"rr-snippets.foo.com", "/images/a.png?size=2", 302, "http://rr-snippets.foo.com/app/images/a.png?size=2"},
		{"rr-snippets.foo.com", "/server", 308, "http://rr-snippets.foo.com/server-moved"},
		{"rr-snippets.foo.com", "/whole", 301, "https://other.example.com/x"},
		{"rr-annotated.foo.com", "/old/b?c=d", 301, "/new/b?c=d"},
		{"rr-annotated.foo.com", "/server", 308, "http://rr-annotated.foo.com/server-moved"},
	}))
}

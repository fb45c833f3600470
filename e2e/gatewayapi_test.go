package e2e

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPISideBySide serves an Ingress and HTTPRoutes through one
// Envoy fed by `ingress-xds serve --manifests` (issue 30): the Ingress
// keeps serving as the Gateway, its listener on Envoy's HTTP port, and
// its Routes arrive; each Route rule is checked by a real request whose
// answer names the backend that took it and what that backend saw.
func TestGatewayAPISideBySide(t *testing.T) {
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "alpha", "beta")...)},
		manifest{"ingress.yaml", gatewaySideIngressYAML})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", httpRoutes)
	})
	framework.Eventually(t, convergeTimeout, "the Ingress served", func() error {
		return envoy.Expect("legacy.example.com", "/", http.StatusOK, "alpha")
	})

	// The Gateway's listener must be on the port Envoy serves HTTP on,
	// which the control plane was given when it started.
	writeManifest(t, dir, "gateway.yaml", fmt.Sprintf(gatewayAPIYAML, cp.HTTPPort))
	framework.Eventually(t, convergeTimeout, "the HTTPRoute served", func() error {
		return envoy.Expect("modern.example.com", "/", http.StatusOK, "beta")
	})

	t.Run("routes", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			// The Ingress, untouched by the Gateway beside it.
			{Host: "legacy.example.com", Path: "/anything", Status: http.StatusOK, Backend: "alpha"},
			// A host both claim stays the Ingress's.
			{Host: "shared.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			// PathPrefix matches whole segments; Exact only itself.
			{Host: "modern.example.com", Path: "/exact", Status: http.StatusOK, Backend: "alpha"},
			{Host: "modern.example.com", Path: "/exact/more", Status: http.StatusOK, Backend: "beta"},
			{Host: "modern.example.com", Path: "/team", Status: http.StatusOK, Backend: "alpha"},
			{Host: "modern.example.com", Path: "/team/x", Status: http.StatusOK, Backend: "alpha"},
			{Host: "modern.example.com", Path: "/teams", Status: http.StatusOK, Backend: "beta"},
			// A Route's wildcard hostname covers one label or more in
			// front of its suffix (an Ingress's covers exactly one).
			{Host: "a.apps.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "a.b.apps.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			{Host: "apps.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			// An unresolved backend answers its rule 500; the Route's
			// other rule is served.
			{Host: "modern.example.com", Path: "/broken", Status: http.StatusInternalServerError, Backend: ""},
			// Not a host of either.
			{Host: "nobody.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
		})
	})

	t.Run("header, query and method matches", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			header       [2]string
			want         string
		}{
			{"GET", "/match", [2]string{}, "beta"},
			{"GET", "/match", [2]string{"X-Canary", "yes"}, "alpha"},
			{"GET", "/match", [2]string{"X-Canary", "no"}, "beta"},
			{"GET", "/match?debug=1", [2]string{}, "alpha"},
			{"GET", "/match?debug=2", [2]string{}, "beta"},
			{"POST", "/match", [2]string{}, "alpha"},
		} {
			r := sendWith(t, envoy, c.method, "modern.example.com", c.path, c.header)
			if r.StatusCode != http.StatusOK || r.Header.Get("X-Backend") != c.want {
				t.Errorf("%s %s with %v: %d from %q, want 200 from %s", c.method, c.path, c.header, r.StatusCode, r.Header.Get("X-Backend"), c.want)
			}
		}
	})

	t.Run("filters", func(t *testing.T) {
		r, err := envoy.Get("modern.example.com", "/strip/deeper/path?q=1")
		if err != nil {
			t.Fatal(err)
		}
		// URLRewrite: the prefix replaced by /, and the Host.
		if r.Status != http.StatusOK || r.Echo.Path != "/deeper/path" || r.Echo.Host != "rewritten.internal" {
			t.Errorf("rewrite: %d, the backend saw %s for %s; want /deeper/path for rewritten.internal", r.Status, r.Echo.Path, r.Echo.Host)
		}
		// Request and response header modifiers.
		if got := r.Echo.Header.Get("X-Env"); got != "prod" {
			t.Errorf("the backend saw X-Env %q, want prod", got)
		}
		if got := r.Header.Get("X-Served-By"); got != "gateway" {
			t.Errorf("the client got X-Served-By %q, want gateway", got)
		}
		// RequestRedirect to https: the scheme's own port is not written.
		r, err = envoy.Get("modern.example.com", "/old/page?x=1")
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != "https://modern.example.com/new/page?x=1" {
			t.Errorf("redirect: %d to %q; want 301 to https://modern.example.com/new/page?x=1", r.Status, r.Header.Get("Location"))
		}
		if r.Backend != "" {
			t.Errorf("the redirect reached backend %s", r.Backend)
		}
		r, err = envoy.Get("modern.example.com:8080", "/old")
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.Get("Location") != "https://modern.example.com/new" {
			t.Errorf("redirect of a Host with a port: to %q; want https://modern.example.com/new", r.Header.Get("Location"))
		}
	})

	t.Run("problems are logged on their objects", func(t *testing.T) {
		log := cp.Output()
		for _, want := range []string{
			`object=default/modern reason=HostConflict .*shared.example.com`,
			`object=default/modern reason=BackendNotFound .*no-such-service`,
		} {
			if !regexp.MustCompile(want).MatchString(log) {
				t.Errorf("no log line matching %s", want)
			}
		}
	})
}

// sendWith makes one request with a method and an optional header.
func sendWith(t *testing.T, envoy *framework.Envoy, method, host, path string, header [2]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if header[0] != "" {
		req.Header.Set(header[0], header[1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

const gatewaySideIngressYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: legacy, namespace: default}
spec:
  rules:
  - host: legacy.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: shared.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// gatewayClassYAML is our GatewayClass, the first document of the
// Gateway API tests' manifests.
const gatewayClassYAML = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ingress-xds}
spec: {controllerName: ingress-xds.io/gateway-controller}
---`

// httpGatewayYAML is our GatewayClass and a Gateway "web" with one
// HTTP listener, on Envoy's HTTP port (its %d).
const httpGatewayYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: %d, protocol: HTTP}]
---`

// gatewayAPIYAML takes Envoy's HTTP port.
const gatewayAPIYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: modern, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [modern.example.com, shared.example.com]
  rules:
  - backendRefs: [{name: beta, port: 80}]
  - matches: [{path: {type: Exact, value: /exact}}, {path: {type: PathPrefix, value: /team/}}]
    backendRefs: [{name: alpha, port: 80}]
  - matches:
    - path: {type: PathPrefix, value: /match}
      headers: [{name: X-Canary, value: "yes"}]
    - path: {type: PathPrefix, value: /match}
      queryParams: [{name: debug, value: "1"}]
    - path: {type: PathPrefix, value: /match}
      method: POST
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /match}}]
    backendRefs: [{name: beta, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /strip}}]
    filters:
    - type: URLRewrite
      urlRewrite: {hostname: rewritten.internal, path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: X-Env, value: prod}]}
    - type: ResponseHeaderModifier
      responseHeaderModifier: {add: [{name: X-Served-By, value: gateway}]}
    backendRefs: [{name: beta, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /old}}]
    filters:
    - type: RequestRedirect
      requestRedirect: {scheme: https, statusCode: 301, path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}}
  - matches: [{path: {type: PathPrefix, value: /broken}}]
    backendRefs: [{name: no-such-service, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: wildcard, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: ["*.apps.example.com"]
  rules:
  - backendRefs: [{name: alpha, port: 80}]
`

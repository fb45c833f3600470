package e2e

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestSharedRouteSettings checks, through a real Envoy, hosts of several
// paths whose Ingress annotations give every path the same retries, body
// bound or request header: the renderer says those once, on the virtual
// host (translate/envoy/vhost_shared.go), and every path must behave as
// ingress-nginx's single-path tests expect of one. It mirrors
// test/e2e/annotations/proxy.go ("should build proxy next upstream",
// "should set proxy client-max-body-size to 8m", judged by nginx's
// proxy_next_upstream and client_max_body_size: a failed try passed to the
// next server, 413 over the size) and
// test/e2e/annotations/xforwardedprefix.go ("should set the
// X-Forwarded-Prefix to the annotation value"), on each path of a host;
// and that a host whose paths differ keeps each path's own settings.
func TestSharedRouteSettings(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	refused := closedPort(t)
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha) + twoEndpointService("refusing", alpha.Port, refused)},
		manifest{"ingresses.yaml", sharedIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		for host, path := range map[string]string{"multi.example.com": "/a", "xfp.example.com": "/a/x", "mixed.example.com": "/a"} {
			if err := envoy.Expect(host, path, http.StatusOK, "alpha"); err != nil {
				return err
			}
		}
		return nil
	})

	// Every endpoint list is one working and one refusing endpoint, taken
	// in turn: a path that does not retry fails about every other request.
	const n = 8
	failures := func(host, path string) int {
		failed := 0
		for range n {
			r := send(t, envoy, http.MethodGet, host, path, nil)
			if r.err != nil || r.status != http.StatusOK || r.backend != "alpha" {
				failed++
			}
		}
		return failed
	}
	t.Run("every path of a host retries", func(t *testing.T) {
		for _, path := range []string{"/a", "/b/x", "/c"} {
			if failed := failures("multi.example.com", path); failed != 0 {
				t.Errorf("multi.example.com%s: %d of %d requests failed, want all served (error timeout, 2 tries)", path, failed, n)
			}
		}
	})
	t.Run("on a host whose paths differ, only the retrying path retries", func(t *testing.T) {
		if failed := failures("mixed.example.com", "/a"); failed != 0 {
			t.Errorf("mixed.example.com/a: %d of %d failed, want all served", failed, n)
		}
		if failed := failures("mixed.example.com", "/b"); failed == 0 {
			t.Errorf("mixed.example.com/b (no retries): every request served, want some refused")
		}
	})
	t.Run("every path of a host has the body bound", func(t *testing.T) {
		for _, path := range []string{"/a", "/b/x", "/c"} {
			if r := send(t, envoy, http.MethodPost, "multi.example.com", path, bytes.NewReader(make([]byte, 2048))); r.err != nil || r.status != http.StatusRequestEntityTooLarge || r.backend != "" {
				t.Errorf("POST 2 KiB to multi.example.com%s: %s, want 413 from Envoy", path, r)
			}
		}
		// The mixed host's other path has no bound: its endpoint may be
		// the refusing one (502), but the body is never refused.
		for range 4 {
			if r := send(t, envoy, http.MethodPost, "mixed.example.com", "/b", bytes.NewReader(make([]byte, 2048))); r.status == http.StatusRequestEntityTooLarge {
				t.Errorf("POST 2 KiB to mixed.example.com/b (no bound): %s", r)
			}
		}
	})
	t.Run("every rewritten path sends X-Forwarded-Prefix", func(t *testing.T) {
		for path, want := range map[string]string{"/a/one": "/one", "/b/two": "/two"} {
			r, err := envoy.Get("xfp.example.com", path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != http.StatusOK || r.Echo.Path != want || r.Echo.Header.Get("X-Forwarded-Prefix") != "/app" {
				t.Errorf("GET xfp.example.com%s: %s, X-Forwarded-Prefix %q; want %s upstream with /app", path, r, r.Echo.Header.Get("X-Forwarded-Prefix"), want)
			}
		}
	})
}

const sharedIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: multi
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "error timeout", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "2", nginx.ingress.kubernetes.io/proxy-body-size: 1k}
spec:
  rules:
  - host: multi.example.com
    http:
      paths:
      - {path: /a, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}
      - {path: /b, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}
      - {path: /c, pathType: Exact, backend: {service: {name: refusing, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: mixed-retry
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "error timeout", nginx.ingress.kubernetes.io/proxy-next-upstream-tries: "2", nginx.ingress.kubernetes.io/proxy-body-size: 1k}
spec:
  rules:
  - host: mixed.example.com
    http: {paths: [{path: /a, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: mixed-plain
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: "off"}
spec:
  rules:
  - host: mixed.example.com
    http: {paths: [{path: /b, pathType: Prefix, backend: {service: {name: refusing, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: xfp
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/rewrite-target: /$1, nginx.ingress.kubernetes.io/x-forwarded-prefix: /app}
spec:
  rules:
  - host: xfp.example.com
    http:
      paths:
      - {path: /a/(.*), pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /b/(.*), pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}
`

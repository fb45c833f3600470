package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// rewriteIngressesYAML are the Ingresses of ingress-nginx's rewrite tests
// (test/e2e/annotations/rewrite.go, xforwardedprefix.go) and of its
// documented rewrite example (docs/examples/rewrite/README.md), each on a
// host of its own, plus a host with no annotation at all.
const rewriteIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: kube-lego, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  rules: [{host: rewrite.bar.com, http: {paths: [{path: /.well-known/acme/challenge, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rewrite-index
  namespace: default
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /new/backend}
spec:
  rules: [{host: rewrite.bar.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: foo, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  rules:
  - {host: foo.bar.com, http: {paths: [{path: /foo, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}
  - {host: longest.bar.com, http: {paths: [{path: /foo/bar/bar, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: regex
  namespace: default
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/rewrite-target: /new/backend}
spec:
  rules:
  - {host: foo.bar.com, http: {paths: [{path: /foo.+, pathType: ImplementationSpecific, backend: {service: {name: echo, port: {number: 80}}}}]}}
  - {host: longest.bar.com, http: {paths: [{path: "/foo/bar/[a-z]{3}", pathType: ImplementationSpecific, backend: {service: {name: echo, port: {number: 80}}}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: custom
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/rewrite-target: /new/backend/$1}
spec:
  rules: [{host: custom.bar.com, http: {paths: [{path: /foo/bar/(.+), pathType: ImplementationSpecific, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: something
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/rewrite-target: /$2}
spec:
  rules: [{host: something.example.com, http: {paths: [{path: /something(/|$)(.*), pathType: ImplementationSpecific, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: xfp
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/rewrite-target: /foo, nginx.ingress.kubernetes.io/x-forwarded-prefix: /test/value}
spec:
  rules: [{host: xfp.baz.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules: [{host: plain.example.com, http: {paths: [{path: /foo, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`

// TestRewriteAndRegex checks, through a real Envoy, what ingress-nginx's
// rewrite and regex tests expect a client and a backend to see.
func TestRewriteAndRegex(t *testing.T) {
	b := echoBackends(t, "echo")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"rewrite.yaml", rewriteIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "first rewrite route served", func() error {
		return expectUpstream(envoy, "custom.bar.com", "/foo/bar/bar", "/new/backend/bar", "")
	})

	for _, tc := range []struct {
		name, host, path string
		// wantPath and wantQuery are what the backend saw; wantPath ""
		// means Envoy answers 404 itself.
		wantPath, wantQuery string
	}{
		// rewrite.go "should use correct longest path match": a plain
		// Ingress's path on a host another Ingress rewrites is tried first
		// (longer) and not rewritten; everything else is.
		{"longer plain path first, not rewritten", "rewrite.bar.com", "/.well-known/acme/challenge", "/.well-known/acme/challenge", ""},
		{"the rewrite of / replaces the whole path", "rewrite.bar.com", "/some/page", "/new/backend", ""},
		// rewrite.go "should use ~* location modifier if regex annotation
		// is present": /foo of the plain Ingress becomes a regex too.
		{"plain path on a regex host", "foo.bar.com", "/foo", "/foo", ""},
		{"the regex location rewrites", "foo.bar.com", "/foo/bar", "/new/backend", ""},
		// Regex mode is case-insensitive and anchored at the start only
		// (Kubernetes blog "Before You Migrate", behaviours 1 and 2): the
		// plain /foo's exact copy matches /FOO and /foobar here, where a
		// host without regex does not.
		{"case-insensitive", "foo.bar.com", "/FOO", "/FOO", ""},
		{"a prefix of the string, not of segments", "longest.bar.com", "/foo/bar/barbecue", "/new/backend", ""},
		{"a host without regex keeps segment prefixes", "plain.example.com", "/foobar", "", ""},
		// rewrite.go "should fail to use longest match for documented
		// warning": the longer pattern string wins, not the closer match.
		{"the longest pattern string wins", "longest.bar.com", "/foo/bar/bar", "/new/backend", ""},
		// rewrite.go "should allow for custom rewrite parameters".
		{"capture groups in the target", "custom.bar.com", "/foo/bar/bar", "/new/backend/bar", ""},
		// docs/examples/rewrite: /something(/|$)(.*) to /$2, the query kept.
		{"example: /something", "something.example.com", "/something", "/", ""},
		{"example: /something/", "something.example.com", "/something/", "/", ""},
		{"example: /something/new", "something.example.com", "/something/new", "/new", ""},
		{"example: case-insensitive", "something.example.com", "/SOMETHING/new", "/new", ""},
		{"example: the query string is kept", "something.example.com", "/something/new?a=1&b=2", "/new", "a=1&b=2"},
		{"example: /somethingelse does not match", "something.example.com", "/somethingelse", "", ""},
		// xforwardedprefix.go "should set the X-Forwarded-Prefix to the
		// annotation value" (checked below as well).
		{"x-forwarded-prefix host rewrites", "xfp.baz.com", "/", "/foo", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := expectUpstream(envoy, tc.host, tc.path, tc.wantPath, tc.wantQuery); err != nil {
				t.Error(err)
			}
		})
	}

	t.Run("X-Forwarded-Prefix is sent with rewritten requests only", func(t *testing.T) {
		r, err := envoy.Get("xfp.baz.com", "/")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Echo.Header.Get("X-Forwarded-Prefix"); got != "/test/value" {
			t.Errorf("rewritten request: the backend saw X-Forwarded-Prefix %q, want /test/value (%s)", got, r)
		}
		r, err = envoy.Get("foo.bar.com", "/foo")
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Echo.Header.Get("X-Forwarded-Prefix"); got != "" {
			t.Errorf("request not rewritten: the backend saw X-Forwarded-Prefix %q", got)
		}
	})
}

// expectUpstream sends GET host path and checks what the backend saw, or,
// with wantPath "", that Envoy answered 404 itself.
func expectUpstream(envoy *framework.Envoy, host, path, wantPath, wantQuery string) error {
	r, err := envoy.Get(host, path)
	if err != nil {
		return fmt.Errorf("GET %s%s: %w", host, path, err)
	}
	if wantPath == "" {
		if r.Status != http.StatusNotFound || r.Backend != "" {
			return fmt.Errorf("GET %s%s: got %s, want a 404 from Envoy", host, path, r)
		}
		return nil
	}
	if r.Status != http.StatusOK || r.Echo.Path != wantPath || r.Echo.Query != wantQuery {
		return fmt.Errorf("GET %s%s: got %s with query %q, want the backend to see %q with query %q", host, path, r, r.Echo.Query, wantPath, wantQuery)
	}
	return nil
}

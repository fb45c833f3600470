package e2e

import (
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestServerAlias checks, through a real Envoy, ingress-nginx's
// test/e2e/annotations/alias.go: without the annotation only the host
// answers ("should return status code 200 for host 'foo' and 404 for
// 'bar'"); with it the alias answers too ("... for host 'foo' and 'bar'"),
// for every path of the host from every Ingress ("... hosts defined in two
// ingresses, different path with one alias").
func TestServerAlias(t *testing.T) {
	b := echoBackends(t, "echo")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"alias.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app-a, namespace: default, annotations: {nginx.ingress.kubernetes.io/server-alias: bar}}
spec:
  rules: [{host: foo, http: {paths: [{path: /app-a, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app-b, namespace: default}
spec:
  rules: [{host: foo, http: {paths: [{path: /app-b, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules: [{host: plain, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "routes served", func() error {
		return envoy.Expect("foo", "/app-a", http.StatusOK, "echo")
	})
	for _, c := range []framework.RouteCase{
		{Host: "foo", Path: "/app-a", Status: http.StatusOK, Backend: "echo"},
		{Host: "bar", Path: "/app-a", Status: http.StatusOK, Backend: "echo"},
		{Host: "bar", Path: "/app-b", Status: http.StatusOK, Backend: "echo"},
		{Host: "BAR:8080", Path: "/app-b", Status: http.StatusOK, Backend: "echo"},
		{Host: "bar", Path: "/other", Status: http.StatusNotFound},
		{Host: "baz", Path: "/app-a", Status: http.StatusNotFound},
		{Host: "plain", Path: "/", Status: http.StatusOK, Backend: "echo"},
	} {
		if err := c.Send(envoy.HTTPAddress); err != nil {
			t.Error(err)
		}
	}
}

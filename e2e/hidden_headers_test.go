package e2e

import (
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestNginxHiddenHeaders checks through a real Envoy, without a ConfigMap,
// that the backend's X-Accel-* and X-Pad headers never reach the client,
// as nginx's proxy module hides them whatever proxy_hide_header says
// (ngx_http_proxy_module.c, ngx_http_proxy_hide_headers): X-Accel-Redirect
// names a path the backend meant for nginx alone. A snippet's
// more_set_headers of one still reaches the client, as headers-more sets
// it after the upstream's headers are copied; the backend's other headers
// pass.
func TestNginxHiddenHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	envoy := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(alpha)}, manifest{"ingresses.yaml", hiddenHeadersYAML}).envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	const query = "/?header=X-Accel-Redirect:/internal/files/report.pdf&header=X-Accel-Buffering:yes&header=X-Accel-Expires:60" +
		"&header=X-Accel-Limit-Rate:1024&header=X-Accel-Charset:utf-8&header=X-Pad:avoid-browser-bug&header=X-Kept:yes"
	for _, host := range []string{"plain.example", "snippet.example"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			_, err := envoy.Get(host, "/")
			return err
		})
	}
	a := snippetRequest(t, envoy, http.MethodGet, "plain.example", query, nil)
	if a.seen == nil {
		t.Fatalf("plain.example: %d %q: not the backend's answer", a.status, a.body)
	}
	for _, h := range []string{"X-Accel-Redirect", "X-Accel-Buffering", "X-Accel-Expires", "X-Accel-Limit-Rate", "X-Accel-Charset", "X-Pad"} {
		if got := a.header.Values(h); len(got) != 0 {
			t.Errorf("plain.example: the client got %s %q, want none", h, got)
		}
	}
	if got := a.header.Get("X-Kept"); got != "yes" {
		t.Errorf("plain.example: X-Kept %q, want the backend's yes", got)
	}
	b := snippetRequest(t, envoy, http.MethodGet, "snippet.example", query, nil)
	if got := b.header.Values("X-Accel-Buffering"); len(got) != 1 || got[0] != "no" {
		t.Errorf("snippet.example: X-Accel-Buffering %q, want more_set_headers' no alone", got)
	}
	if got := b.header.Values("X-Accel-Redirect"); len(got) != 0 {
		t.Errorf("snippet.example: the client got X-Accel-Redirect %q, want none", got)
	}
}

// hiddenHeadersYAML serves plain.example as the defaults make it and
// snippet.example with a snippet that sets one of the hidden headers.
var hiddenHeadersYAML = hostIngressYAML("plain", "plain.example", "alpha", "") + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-Accel-Buffering: no";
spec:
  rules: [{host: snippet.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`

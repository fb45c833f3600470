package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapDefaultType: the ConfigMap's default-type is the
// Content-Type of a snippet's return text, as nginx.tmpl writes it
// (default_type at the http level, line 311) and nginx's return sends its
// text with it (ngx_http_rewrite_module); without it, ingress-nginx's
// text/html.
func TestControllerConfigMapDefaultType(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	snippets := map[string]string{"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"}
	withType := map[string]string{"default-type": "text/plain; charset=utf-8"}
	for k, v := range snippets {
		withType[k] = v
	}
	fm, configure := startConfigMapMode(t, withType,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: health
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      return 200 "healthy\n";
spec:
  rules:
  - host: health.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`})
	contentType := func(want string) func() error {
		return func() error {
			r, err := fm.envoy.Get("health.example.com", "/")
			switch {
			case err != nil:
				return err
			case r.Status != http.StatusOK || r.Body != "healthy\n" || r.Header.Get("Content-Type") != want:
				return fmt.Errorf("%d %q, Content-Type %q, want 200 \"healthy\\n\" and %q", r.Status, r.Body, r.Header.Get("Content-Type"), want)
			}
			return nil
		}
	}
	framework.Eventually(t, convergeTimeout, "the ConfigMap's type", contentType("text/plain; charset=utf-8"))
	configure(snippets)
	framework.Eventually(t, convergeTimeout, "ingress-nginx's text/html", contentType("text/html"))
}

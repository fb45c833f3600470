package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapInterceptErrors: the ConfigMap's
// custom-http-errors sends an upstream's listed error to the Ingress's
// default backend, and its disable-proxy-intercept-errors keeps the
// upstream's answer (nginx.tmpl writes proxy_intercept_errors on from
// custom-http-errors only without it), as ingress-nginx's
// customhttperrors.go and disableproxyintercepterrors tests expect of the
// annotations the keys are the defaults of.
func TestControllerConfigMapInterceptErrors(t *testing.T) {
	backends := echoBackends(t, "alpha", "errors")
	keys := map[string]string{"custom-http-errors": "503"}
	off := map[string]string{"custom-http-errors": "503", "disable-proxy-intercept-errors": "true"}
	fm, configure := startConfigMapMode(t, off,
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"ingresses.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pages
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/default-backend: errors}
spec:
  rules:
  - host: pages.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`})
	answeredBy := func(backend string) func() error {
		return func() error {
			r, err := fm.envoy.Get("pages.example.com", "/page?status=503")
			if err == nil && (r.Status != http.StatusServiceUnavailable || r.Backend != backend) {
				err = fmt.Errorf("%d from %q, want 503 from %q", r.Status, r.Backend, backend)
			}
			return err
		}
	}
	framework.Eventually(t, convergeTimeout, "the upstream's 503 kept", answeredBy("alpha"))
	configure(keys)
	framework.Eventually(t, convergeTimeout, "the default backend's 503", answeredBy("errors"))
}

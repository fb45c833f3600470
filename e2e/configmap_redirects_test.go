package e2e

import (
	"fmt"
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
	locations := func(want map[string]string) func() error {
		return func() error {
			for host, location := range want {
				r, err := fm.envoy.Get(host, "/something")
				if err != nil {
					return err
				}
				if r.Status != http.StatusMovedPermanently || r.Header.Get("Location") != location {
					return fmt.Errorf("%s: %d, Location %q, want 301 and %q", host, r.Status, r.Header.Get("Location"), location)
				}
			}
			return nil
		}
	}
	framework.Eventually(t, convergeTimeout, "relative Locations", locations(map[string]string{
		"rr.foo.com": "/new-location", "rr-plain.foo.com": "/new-location"}))
	configure(nil)
	framework.Eventually(t, convergeTimeout, "absolute Locations without the key", locations(map[string]string{
		"rr.foo.com": "http://rr.foo.com/new-location", "rr-plain.foo.com": "http://rr-plain.foo.com/new-location"}))
}

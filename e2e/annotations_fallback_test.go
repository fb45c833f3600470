package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestFallbackAnnotations checks ingress-nginx's default-backend through a
// real Envoy, each scenario naming the ingress-nginx test it mirrors
// (test/e2e/annotations/default_backend.go) or its documentation (the
// annotation's: "used to handle the response when the configured service
// in the Ingress rule does not have any active endpoints").
func TestFallbackAnnotations(t *testing.T) {
	backends := echoBackends(t, "alpha", "errors")
	alpha := backends[0]
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"down.yaml", notReadyServiceYAML("down", alpha)},
		manifest{"ingresses.yaml", fallbackIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})

	// The annotation's documentation: with a ready endpoint, the rule's
	// Service answers, never the default backend.
	t.Run("a Service with a ready endpoint answers itself", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "up.example.com served by alpha", func() error {
			return envoy.Expect("up.example.com", "/", http.StatusOK, "alpha")
		})
		for i := 0; i < 20; i++ {
			if err := envoy.Expect("up.example.com", fmt.Sprintf("/%d", i), http.StatusOK, "alpha"); err != nil {
				t.Fatal(err)
			}
		}
	})

	// default_backend.go "should use a custom default backend as
	// upstream", where the rule's Service exists with no ready endpoint:
	// the default backend answers, on the request's own path.
	t.Run("a Service without a ready endpoint falls back", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "down.example.com served by errors", func() error {
			return envoy.Expect("down.example.com", "/alma/armud", http.StatusOK, "errors")
		})
		r, err := envoy.Get("down.example.com", "/alma/armud")
		if err != nil || r.Echo.Path != "/alma/armud" || r.Echo.Host != "down.example.com" {
			t.Errorf("the default backend saw %+v (%v), want the request's path and host", r.Echo, err)
		}
	})

	// Without the annotation, the same Service is a 503 from Envoy: the
	// fallback is the annotation's doing.
	t.Run("without the annotation, the same Service is a 503", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "plain-down.example.com a 503 from Envoy", func() error {
			return envoy.Expect("plain-down.example.com", "/", http.StatusServiceUnavailable, "")
		})
	})

	// default_backend.go "should use a custom default backend as
	// upstream" as it is written: the rule names Service "invalid", which
	// does not exist; the default backend answers and sees X-Code: 503,
	// X-Ingress-Name, X-Service-Name and the others.
	t.Run("a missing Service falls back with ingress-nginx's headers", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "missing.example.com served by errors", func() error {
			return envoy.Expect("missing.example.com", "/alma/armud", http.StatusOK, "errors")
		})
		r, err := envoy.Get("missing.example.com", "/alma/armud")
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{
			"X-Code": "503", "X-Ingress-Name": "missing", "X-Service-Name": "invalid",
			"X-Service-Port": "80", "X-Namespace": "default",
		} {
			if got := r.Echo.Header.Get(name); got != want {
				t.Errorf("the default backend saw %s: %q, want %q", name, got, want)
			}
		}
		if r.Echo.Header.Get("X-Request-Id") == "" {
			t.Errorf("the default backend saw no X-Request-ID")
		}
	})

	// The choice follows the endpoints, as ingress-nginx's follows them
	// on each sync: once the Service has a ready endpoint it answers, and
	// when it has none again the default backend does.
	t.Run("the fallback follows readiness", func(t *testing.T) {
		writeManifest(t, fm.dir, "down.yaml", readyServiceYAML("down", alpha))
		framework.Eventually(t, convergeTimeout, "down.example.com served by alpha once ready", func() error {
			return envoy.Expect("down.example.com", "/", http.StatusOK, "alpha")
		})
		writeManifest(t, fm.dir, "down.yaml", notReadyServiceYAML("down", alpha))
		framework.Eventually(t, convergeTimeout, "down.example.com served by errors again", func() error {
			return envoy.Expect("down.example.com", "/", http.StatusOK, "errors")
		})
	})
}

// TestCustomHTTPErrors checks ingress-nginx's custom-http-errors through a
// real Envoy. ingress-nginx's test (test/e2e/annotations/customhttperrors.go
// "configures Nginx correctly") only reads nginx.conf: error_page for each
// code to a location that sends to the default backend, from the
// annotation when set; its docs/user-guide/custom-errors.md says what the
// default backend receives (X-Code, X-Namespace, X-Ingress-Name,
// X-Service-Name, X-Service-Port, a GET of "/"). The echo backend answers
// the status its query asks for.
func TestCustomHTTPErrors(t *testing.T) {
	backends := echoBackends(t, "alpha", "errors")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"ingresses.yaml", customErrorsIngressesYAML})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "pages.example.com served by alpha", func() error {
		return envoy.Expect("pages.example.com", "/", http.StatusOK, "alpha")
	})

	// customhttperrors.go "configures Nginx correctly": error_page 404
	// and 503 send to the default backend from the annotation, whose
	// answer the client gets, status included. nginx's rewrite to /
	// keeps the query, so the default backend (an echo too) is asked for
	// the same status and answers it.
	for _, code := range []string{"404", "503"} {
		t.Run("an upstream's "+code+" is the default backend's answer", func(t *testing.T) {
			r, err := envoy.Get("pages.example.com", "/some/page?status="+code)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.Status) != code || r.Backend != "errors" {
				t.Fatalf("GET /some/page?status=%s: %d from %q, want the default backend's answer, %s", code, r.Status, r.Backend, code)
			}
			if r.Echo.Path != "/" || r.Echo.Query != "status="+code {
				t.Errorf("the default backend was asked for %q?%q, want /?status=%s (nginx's rewrite to /, query kept)", r.Echo.Path, r.Echo.Query, code)
			}
			for name, want := range map[string]string{
				"X-Code": code, "X-Ingress-Name": "pages", "X-Service-Name": "alpha", "X-Service-Port": "80", "X-Namespace": "default",
			} {
				if got := r.Echo.Header.Get(name); got != want {
					t.Errorf("the default backend saw %s: %q, want %q", name, got, want)
				}
			}
		})
	}

	// customhttperrors.go: only the codes listed have an error_page.
	t.Run("a code not listed passes through", func(t *testing.T) {
		if err := envoy.Expect("pages.example.com", "/?status=500", http.StatusInternalServerError, "alpha"); err != nil {
			t.Error(err)
		}
	})

	// Without default-backend, ingress-nginx uses its global default
	// backend; ingress-xds has none, and the response passes through (the
	// stated difference). disable-proxy-intercept-errors keeps the
	// backend's error responses, as proxy_intercept_errors off.
	t.Run("without a default backend, or with intercepting off, the response passes through", func(t *testing.T) {
		for _, path := range []string{"/plain?status=503", "/off?status=503"} {
			if err := envoy.Expect("pages.example.com", path, http.StatusServiceUnavailable, "alpha"); err != nil {
				t.Error(err)
			}
		}
	})
}

const customErrorsIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pages
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/default-backend: errors, nginx.ingress.kubernetes.io/custom-http-errors: "404,503"}
spec:
  rules:
  - host: pages.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: no-backend
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-http-errors: "503"}
spec:
  rules:
  - host: pages.example.com
    http: {paths: [{path: /plain, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: intercept-off
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/default-backend: errors
    nginx.ingress.kubernetes.io/custom-http-errors: "503"
    nginx.ingress.kubernetes.io/disable-proxy-intercept-errors: "true"
spec:
  rules:
  - host: pages.example.com
    http: {paths: [{path: /off, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// notReadyServiceYAML is a Service whose one endpoint, at backend, is not
// ready; readyServiceYAML the same endpoint ready.
func notReadyServiceYAML(name string, backend *framework.Backend) string {
	return serviceWithEndpoint(name, backend, false)
}

func readyServiceYAML(name string, backend *framework.Backend) string {
	return serviceWithEndpoint(name, backend, true)
}

func serviceWithEndpoint(name string, backend *framework.Backend, ready bool) string {
	return fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec:
  ports: [{port: 80, targetPort: %[3]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: default, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{port: %[3]d}]
endpoints: [{addresses: [%[2]q], conditions: {ready: %[4]t}}]
`, name, backend.Host, backend.Port, ready)
}

const fallbackIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: up
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/default-backend: errors}
spec:
  rules:
  - host: up.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: down
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/default-backend: errors}
spec:
  rules:
  - host: down.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: down, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain-down, namespace: default}
spec:
  rules:
  - host: plain-down.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: down, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: missing
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/default-backend: errors}
spec:
  rules:
  - host: missing.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: invalid, port: {number: 80}}}}]}
`

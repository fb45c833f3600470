package e2e

import (
	"fmt"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestCustomHeaders checks custom-headers through a real Envoy, each
// scenario naming the test of ingress-nginx's
// test/e2e/annotations/customheaders.go it mirrors: the ConfigMap's
// entries are response headers, once global-allowed-response-headers
// (here serve's --global-allowed-response-headers) lists their names.
// And connection-proxy-header (its connection.go).
func TestCustomHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha)+notReadyServiceYAML("down", alpha))
	writeManifest(t, dir, "ingresses.yaml", customHeadersYAML)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--global-allowed-response-headers", "My-Custom-Header, My-Custom-Header-Dollar")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the Ingresses served", func() error {
		if err := envoy.Expect("custom-headers", "/", http.StatusOK, "alpha"); err != nil {
			return err
		}
		return envoy.Expect("no-custom-headers", "/", http.StatusOK, "alpha")
	})

	// customheaders.go `should set "more_set_headers 'My-Custom-Header'
	// '42';" when custom-headers are set`: both headers, the dollar one as
	// written (no variable is expanded).
	t.Run("the ConfigMap's entries are response headers", func(t *testing.T) {
		a := corsRequest(t, envoy, http.MethodGet, "custom-headers", "/", "", nil)
		a.expect(t, http.StatusOK, "alpha", map[string]string{"My-Custom-Header": "42", "My-Custom-Header-Dollar": "$remote_addr 100%"})
		// more_set_headers replaces the backend's own value.
		a = corsRequest(t, envoy, http.MethodGet, "custom-headers", "/?header=My-Custom-Header:backend", "", nil)
		a.expect(t, http.StatusOK, "alpha", map[string]string{"My-Custom-Header": "42"})
		// And Envoy's own answers carry them, as nginx's carry
		// more_set_headers.
		a = corsRequest(t, envoy, http.MethodGet, "down-headers", "/", "", nil)
		a.expect(t, http.StatusServiceUnavailable, "", map[string]string{"My-Custom-Header": "42"})
	})

	// connection.go "set connection header to keep-alive": the backend
	// sees the Connection header asked for; without the key, none
	// (Envoy's own handling, which keeps connections alive).
	t.Run("connection-proxy-header is the backend's Connection", func(t *testing.T) {
		for host, want := range map[string]string{"keep-alive": "keep-alive", "close": "close", "no-custom-headers": ""} {
			r, err := envoy.Get(host, "/")
			if err != nil || r.Status != http.StatusOK || r.Echo.Header.Get("Connection") != want {
				t.Errorf("%s: %v (%v), the backend saw Connection %q, want %q", host, r, err, r.Echo.Header.Get("Connection"), want)
			}
		}
	})

	// customheaders.go "should return status code 200 when no
	// custom-headers is configured".
	t.Run("without the annotation, no header", func(t *testing.T) {
		a := corsRequest(t, envoy, http.MethodGet, "no-custom-headers", "/", "", nil)
		a.expect(t, http.StatusOK, "alpha", map[string]string{"My-Custom-Header": ""})
	})

	// customheaders.go "should return status code 503 when custom-headers
	// is configured with an invalid secret": the ConfigMap does not exist.
	// And what ingress-nginx's parser denies the location for: a name
	// global-allowed-response-headers does not list.
	t.Run("a missing ConfigMap, or a name not allowed, is a 503", func(t *testing.T) {
		for _, host := range []string{"missing-headers", "unlisted-headers"} {
			framework.Eventually(t, convergeTimeout, host+" answers 503", func() error {
				return envoy.Expect(host, "/", http.StatusServiceUnavailable, "")
			})
		}
	})
}

// TestCustomHeadersInClusterMode: against a real API server, the ConfigMap
// custom-headers names is followed by kube's watch of referenced objects
// (the front-end's References): missing, the paths answer 503
// (customheaders.go "should return status code 503 when custom-headers is
// configured with an invalid secret"); created, its entries are the
// response headers (`should set "more_set_headers 'My-Custom-Header'
// '42';"`); changed, the new values are; deleted, 503 again.
func TestCustomHeadersInClusterMode(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	netns := framework.NewNetns(t)
	backend := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", backend+"=netns-echo"))
	framework.Eventually(t, convergeTimeout, "echo in the namespace answers", func() error {
		return framework.Expect(backend, "direct", "/", http.StatusOK, "netns-echo")
	})
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.CoreV1().Services(namespace), service("web", 8080))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, ready(netns.IP)))
	ing := ingress("web", nil, "web.example.com", prefix("/", "web"))
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/custom-headers": namespace + "/response-headers"}
	create(t, kc.NetworkingV1().Ingresses(namespace), ing)

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--watch-classless", "--global-allowed-response-headers", "My-Custom-Header")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	header := func(want string) func() error {
		return func() error {
			r, err := envoy.Get("web.example.com", "/")
			if err != nil {
				return err
			}
			if r.Status != http.StatusOK || r.Backend != "netns-echo" || r.Header.Get("My-Custom-Header") != want {
				return fmt.Errorf("%s with My-Custom-Header %q, want 200 from netns-echo with %q", r, r.Header.Get("My-Custom-Header"), want)
			}
			return nil
		}
	}
	framework.Eventually(t, convergeTimeout, "no ConfigMap yet: 503", func() error {
		return envoy.Expect("web.example.com", "/", http.StatusServiceUnavailable, "")
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "response-headers", Namespace: namespace}, Data: map[string]string{"My-Custom-Header": "42"}}
	create(t, kc.CoreV1().ConfigMaps(namespace), cm)
	framework.Eventually(t, convergeTimeout, "the ConfigMap created: its header", header("42"))

	cm.Data["My-Custom-Header"] = "43"
	update(t, kc.CoreV1().ConfigMaps(namespace), cm)
	framework.Eventually(t, convergeTimeout, "the ConfigMap changed: the new value", header("43"))

	if err := kc.CoreV1().ConfigMaps(namespace).Delete(t.Context(), cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "the ConfigMap deleted: 503", func() error {
		return envoy.Expect("web.example.com", "/", http.StatusServiceUnavailable, "")
	})
}

const customHeadersYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: custom-headers, namespace: default}
data:
  My-Custom-Header: "42"
  My-Custom-Header-Dollar: "$remote_addr 100%"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unlisted, namespace: default}
data:
  My-Custom-Header: "42"
  X-Not-Listed: "1"
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: custom-headers
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-headers: default/custom-headers}
spec:
  rules:
  - host: custom-headers
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: down-headers
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: down, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: keep-alive
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/connection-proxy-header: keep-alive}
spec:
  rules:
  - host: keep-alive
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: close
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/connection-proxy-header: close}
spec:
  rules:
  - host: close
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: no-custom-headers, namespace: default}
spec:
  rules:
  - host: no-custom-headers
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: missing-headers
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-headers: default/nowhere}
spec:
  rules:
  - host: missing-headers
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: unlisted-headers
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-headers: default/unlisted}
spec:
  rules:
  - host: unlisted-headers
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// TestCustomHeadersAllowedByConfigMap: ingress-nginx reads the names
// custom-headers may set from its ConfigMap's
// global-allowed-response-headers (customheaders/main.go,
// defBackend.AllowedResponseHeaders); listed there, with no serve flag,
// the header is set; unlisted again, the location is denied (503).
func TestCustomHeadersAllowedByConfigMap(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	const ingress = `apiVersion: v1
kind: ConfigMap
metadata: {name: response-headers, namespace: default}
data: {My-Custom-Header: "42"}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: custom
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/custom-headers: default/response-headers}
spec:
  rules:
  - host: custom.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`
	fm, configure := startConfigMapMode(t, map[string]string{"global-allowed-response-headers": "X-Other, My-Custom-Header"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", ingress})
	framework.Eventually(t, convergeTimeout, "My-Custom-Header set", func() error {
		r, err := fm.envoy.Get("custom.example.com", "/")
		if err == nil && (r.Status != http.StatusOK || r.Header.Get("My-Custom-Header") != "42") {
			err = fmt.Errorf("%s with My-Custom-Header %q, want 200 with 42", r, r.Header.Get("My-Custom-Header"))
		}
		return err
	})
	configure(map[string]string{"global-allowed-response-headers": "X-Other"})
	framework.Eventually(t, convergeTimeout, "the name no longer allowed: 503", func() error {
		return fm.envoy.Expect("custom.example.com", "/", http.StatusServiceUnavailable, "")
	})
}

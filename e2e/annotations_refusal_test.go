package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// refusedManifests are two Ingresses of one host, the second carrying a
// snippet, and one alone on its host with ModSecurity.
const refusedManifests = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: open, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  rules: [{host: shared.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "Foo1: Bar1";
      allow 10.0.0.0/8;
      deny all;
      access_by_lua_block { ngx.exit(ngx.HTTP_FORBIDDEN) }
spec:
  rules: [{host: shared.example, http: {paths: [{path: /admin, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: waf, namespace: default, annotations: {nginx.ingress.kubernetes.io/enable-modsecurity: "true"}}
spec:
  rules: [{host: waf.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: admin, port: {number: 80}}}}]}}]
`

// TestRefusedIngress checks, through a real Envoy, what becomes of an
// Ingress carrying an access control ingress-xds cannot apply (a snippet,
// ModSecurity). ingress-nginx's test/e2e/annotations/snippet.go ("drops
// snippet more_set_header in all locations if disabled by admin") and
// serversnippet.go serve such an Ingress without its snippet when the
// operator disallows snippets, and its default annotations-risk-level
// (High, since v1.12) leaves an Ingress with a Critical annotation out;
// ingress-xds refuses by default: the Ingress's paths answer 503 (as
// ingress-nginx's template answers a denied location), the other Ingress
// of the host keeps serving, and a request for the refused /admin never
// falls through to its /. With --unsupported-annotations=ignore the
// Ingress is served without the snippet, as ingress-nginx serves it with
// allow-snippet-annotations off.
func TestRefusedIngress(t *testing.T) {
	b := echoBackends(t, "echo", "admin")
	services := echoServicesYAML(b[0], b[1])

	t.Run("refused by default", func(t *testing.T) {
		fm := startFileMode(t, nil, manifest{"services.yaml", services}, manifest{"ingresses.yaml", refusedManifests})
		envoy := fm.envoy
		t.Cleanup(func() { assertNothingRejected(t, envoy) })
		framework.Eventually(t, convergeTimeout, "the open Ingress served", func() error {
			return envoy.Expect("shared.example", "/", http.StatusOK, "echo")
		})
		for _, c := range []framework.RouteCase{
			{Host: "shared.example", Path: "/", Status: http.StatusOK, Backend: "echo"},
			{Host: "shared.example", Path: "/other", Status: http.StatusOK, Backend: "echo"},
			{Host: "shared.example", Path: "/admin", Status: http.StatusServiceUnavailable},
			{Host: "shared.example", Path: "/admin/users", Status: http.StatusServiceUnavailable},
			{Host: "waf.example", Path: "/", Status: http.StatusServiceUnavailable},
		} {
			if err := c.Send(envoy.HTTPAddress); err != nil {
				t.Error(err)
			}
		}
		r, err := framework.Get(envoy.HTTPAddress, "shared.example", "/admin")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Body, "refused") || r.Header.Get("Foo1") != "" {
			t.Errorf("/admin: %s, header Foo1 %q: want the refusal's 503 and nothing of the snippet", r, r.Header.Get("Foo1"))
		}
		if n := b[1].Requests(); n != 0 {
			t.Errorf("the refused Ingresses' backend got %d requests", n)
		}
	})

	t.Run("served without the snippet with --unsupported-annotations=ignore", func(t *testing.T) {
		dir := t.TempDir()
		writeManifest(t, dir, "services.yaml", services)
		writeManifest(t, dir, "ingresses.yaml", refusedManifests)
		cp := framework.StartControlPlane(t, "--manifests", dir, "--unsupported-annotations", "ignore")
		cp.WaitReady(t)
		envoy := framework.StartEnvoy(t, cp)
		t.Cleanup(func() { assertNothingRejected(t, envoy) })
		framework.Eventually(t, convergeTimeout, "the snippet's Ingress served", func() error {
			return envoy.Expect("shared.example", "/admin", http.StatusOK, "admin")
		})
		for _, c := range []framework.RouteCase{
			{Host: "shared.example", Path: "/", Status: http.StatusOK, Backend: "echo"},
			{Host: "waf.example", Path: "/", Status: http.StatusOK, Backend: "admin"},
		} {
			if err := c.Send(envoy.HTTPAddress); err != nil {
				t.Error(err)
			}
		}
		r, err := framework.Get(envoy.HTTPAddress, "shared.example", "/admin")
		if err != nil {
			t.Fatal(err)
		}
		if r.Header.Get("Foo1") != "" {
			t.Errorf("the snippet's header reached the client: %v", r.Header)
		}
	})
}

// TestRefusedIngressClusterMode checks the same in a real API server: the
// Warning Event names the key and says why; a refused Ingress gets no
// status address (it is not served), and gets one once the key is removed.
func TestRefusedIngressClusterMode(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	netns := framework.NewNetns(t)
	backend := netns.IP + ":8080"
	framework.StartProcess(t, "echo-netns", netns.Command(framework.EchoBinary(t), "-listen", backend+"=netns-echo"))

	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	create(t, kc.CoreV1().Services(namespace), service("web", 8080))
	create(t, kc.DiscoveryV1().EndpointSlices(namespace), endpointSlice("web-1", "web", 8080, ready(netns.IP)))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("open", ptr(ourClass), "shared.example.com", prefix("/", "web")))
	refused := ingress("snippet", ptr(ourClass), "shared.example.com", prefix("/admin", "web"))
	refused.Annotations = map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "location /admin { proxy_pass http://elsewhere; }"}
	create(t, kc.NetworkingV1().Ingresses(namespace), refused)

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--status-address", "203.0.113.7,lb.example.com")
	framework.Eventually(t, 60*time.Second, "ingress-xds /readyz returns 200", cp.Ready)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })

	framework.Eventually(t, convergeTimeout, "the open Ingress served", func() error {
		return envoy.Expect("shared.example.com", "/", http.StatusOK, "netns-echo")
	})
	if err := envoy.Expect("shared.example.com", "/admin", http.StatusServiceUnavailable, ""); err != nil {
		t.Error(err)
	}
	waitForWarning(t, kc, "snippet", "AnnotationRefused", "server-snippet", "directive proxy_pass (line 1)", "not served")

	framework.Eventually(t, convergeTimeout, "status of open", func() error { return hasStatus(ctx, kc, "open", wantStatus) })
	// Both were there when the writer started, and every pass covers all
	// Ingresses: had snippet been given an address, it would have it now.
	if err := hasStatus(ctx, kc, "snippet", nil); err != nil {
		t.Errorf("a refused Ingress: %v", err)
	}

	t.Run("served once the snippet is removed", func(t *testing.T) {
		ing, err := kc.NetworkingV1().Ingresses(namespace).Get(ctx, "snippet", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ing.Annotations = nil
		update(t, kc.NetworkingV1().Ingresses(namespace), ing)
		framework.Eventually(t, convergeTimeout, "/admin served", func() error {
			return envoy.Expect("shared.example.com", "/admin", http.StatusOK, "netns-echo")
		})
		framework.Eventually(t, convergeTimeout, "status of snippet", func() error { return hasStatus(ctx, kc, "snippet", wantStatus) })
	})
	t.Run("refused again when it comes back", func(t *testing.T) {
		ing, err := kc.NetworkingV1().Ingresses(namespace).Get(ctx, "snippet", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "content_by_lua_block { ngx.say(\"hi\") }"}
		update(t, kc.NetworkingV1().Ingresses(namespace), ing)
		framework.Eventually(t, convergeTimeout, "/admin refused", func() error {
			return envoy.Expect("shared.example.com", "/admin", http.StatusServiceUnavailable, "")
		})
		framework.Eventually(t, convergeTimeout, "status of snippet gone", func() error { return hasStatus(ctx, kc, "snippet", nil) })
	})
}

// TestConfigMapRefusalsClusterMode checks in a real API server that an
// Ingress the controller ConfigMap's rules refuse gets no status address,
// as ingress-nginx's store never lists it (store.go syncIngress: a word of
// annotation-value-word-blocklist; annotations.go Extract: a snippet, or
// any key, riskier than annotations-risk-level), and gets one once the
// ConfigMap lets it be served: the status follows the ConfigMap as the
// routes do.
func TestConfigMapRefusalsClusterMode(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	ctx := t.Context()
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	startNetnsEcho(t, kc, framework.NewNetns(t), "web", 8080)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
		Data:       map[string]string{"annotation-value-word-blocklist": "evil"},
	}
	create(t, kc.CoreV1().ConfigMaps("ingress-nginx"), cm)
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("open", ptr(ourClass), "open.example.com", prefix("/", "web")))
	blocked := ingress("blocked", ptr(ourClass), "blocked.example.com", prefix("/", "web"))
	blocked.Annotations = map[string]string{"nginx.ingress.kubernetes.io/upstream-vhost": "evil.example.com"}
	create(t, kc.NetworkingV1().Ingresses(namespace), blocked)
	snippet := ingress("snippet", ptr(ourClass), "snippet.example.com", prefix("/", "web"))
	snippet.Annotations = map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": `more_set_headers "X-Snippet: 1";`}
	create(t, kc.NetworkingV1().Ingresses(namespace), snippet)
	// server-alias is of risk High in ingress-nginx's registry.
	aliased := ingress("aliased", ptr(ourClass), "aliased.example.com", prefix("/", "web"))
	aliased.Annotations = map[string]string{"nginx.ingress.kubernetes.io/server-alias": "www.aliased.example.com"}
	create(t, kc.NetworkingV1().Ingresses(namespace), aliased)

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--configmap", "ingress-nginx/ingress-nginx-controller",
		"--status-address", "203.0.113.7,lb.example.com")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })

	framework.Eventually(t, convergeTimeout, "open and aliased served, the others refused", func() error {
		for _, host := range []string{"open.example.com", "aliased.example.com", "www.aliased.example.com"} {
			if err := envoy.Expect(host, "/", http.StatusOK, "web"); err != nil {
				return err
			}
		}
		for _, host := range []string{"blocked.example.com", "snippet.example.com"} {
			if err := envoy.Expect(host, "/", http.StatusServiceUnavailable, ""); err != nil {
				return err
			}
		}
		return nil
	})
	framework.Eventually(t, convergeTimeout, "status of open", func() error { return hasStatus(ctx, kc, "open", wantStatus) })
	framework.Eventually(t, convergeTimeout, "status of aliased", func() error { return hasStatus(ctx, kc, "aliased", wantStatus) })
	// All of them were there when the writer started, and every pass
	// covers all Ingresses: had the others been given an address, they
	// would have it now.
	for _, name := range []string{"blocked", "snippet"} {
		if err := hasStatus(ctx, kc, name, nil); err != nil {
			t.Errorf("%s, refused by the ConfigMap's rules: %v", name, err)
		}
	}

	t.Run("served, with a status, once the ConfigMap allows them", func(t *testing.T) {
		cm.Data = map[string]string{"annotations-risk-level": "Critical", "allow-snippet-annotations": "true"}
		update(t, kc.CoreV1().ConfigMaps("ingress-nginx"), cm)
		framework.Eventually(t, convergeTimeout, "both served", func() error {
			if err := envoy.Expect("blocked.example.com", "/", http.StatusOK, "web"); err != nil {
				return err
			}
			return envoy.Expect("snippet.example.com", "/", http.StatusOK, "web")
		})
		for _, name := range []string{"blocked", "snippet"} {
			framework.Eventually(t, convergeTimeout, "status of "+name, func() error { return hasStatus(ctx, kc, name, wantStatus) })
		}
	})
	t.Run("a word blocked again takes the status away", func(t *testing.T) {
		cm.Data["annotation-value-word-blocklist"] = "evil"
		update(t, kc.CoreV1().ConfigMaps("ingress-nginx"), cm)
		framework.Eventually(t, convergeTimeout, "blocked refused", func() error {
			return envoy.Expect("blocked.example.com", "/", http.StatusServiceUnavailable, "")
		})
		framework.Eventually(t, convergeTimeout, "status of blocked gone", func() error { return hasStatus(ctx, kc, "blocked", nil) })
		if err := hasStatus(ctx, kc, "snippet", wantStatus); err != nil {
			t.Errorf("snippet, allowed by the ConfigMap: %v", err)
		}
	})
	// annotations.go Extract: parser.CheckAnnotationRisk rejects an
	// Ingress carrying a key riskier than annotations-risk-level.
	t.Run("a key riskier than annotations-risk-level takes the status away", func(t *testing.T) {
		cm.Data = map[string]string{"annotations-risk-level": "Medium"}
		update(t, kc.CoreV1().ConfigMaps("ingress-nginx"), cm)
		framework.Eventually(t, convergeTimeout, "aliased and snippet refused", func() error {
			for _, host := range []string{"aliased.example.com", "snippet.example.com"} {
				if err := envoy.Expect(host, "/", http.StatusServiceUnavailable, ""); err != nil {
					return err
				}
			}
			return envoy.Expect("blocked.example.com", "/", http.StatusOK, "web")
		})
		for _, name := range []string{"aliased", "snippet"} {
			framework.Eventually(t, convergeTimeout, "status of "+name+" gone", func() error { return hasStatus(ctx, kc, name, nil) })
		}
		waitForWarning(t, kc, "aliased", "AnnotationRefused", "server-alias", "High", "annotations-risk-level, Medium")
		if err := hasStatus(ctx, kc, "blocked", wantStatus); err != nil {
			t.Errorf("blocked, whose upstream-vhost is Low: %v", err)
		}
	})
}

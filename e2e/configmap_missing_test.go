package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapMissing runs serve --configmap against a real API
// server where the ConfigMap it names does not exist yet: serve starts and
// serves (as ingress-nginx does without its ConfigMap, with its
// defaults), says so in its log and on /metrics
// (ingress_xds_controller_configmap_found 0), keeps watching, and applies
// the ConfigMap once it is created, without a restart
// (settings/configmap_change.go's change, on a ConfigMap that was not
// there), traffic through a real Envoy included.
func TestControllerConfigMapMissing(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx"}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))

	startNetnsEcho(t, kc, framework.NewNetns(t), "web", 8080)
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("web", ptr(ourClass), "web.example.com", prefix("/", "web")))

	const name = "ingress-nginx/ingress-nginx-controller"
	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig, "--configmap", name)
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	post := func(size int) sent {
		return send(t, envoy, http.MethodPost, "web.example.com", "/", strings.NewReader(strings.Repeat("x", size)))
	}
	framework.Eventually(t, convergeTimeout, "served without the ConfigMap", func() error {
		if r := post(4096); r.status != http.StatusOK {
			return fmt.Errorf("POST of 4096 bytes: %s, want 200 (no body limit)", r)
		}
		return nil
	})
	found := func() (string, error) { return configMapFoundMetric(cp.MetricsAddress) }
	t.Run("the missing ConfigMap is logged and on /metrics", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "the gauge at 0", func() error {
			if v, err := found(); err != nil || v != "0" {
				return fmt.Errorf("ingress_xds_controller_configmap_found %q (%v), want 0", v, err)
			}
			return nil
		})
		if out := cp.Output(); !strings.Contains(out, "the controller ConfigMap is not found") || !strings.Contains(out, name) {
			t.Errorf("serve's log does not say the ConfigMap %s is missing:\n%s", name, cp.Tail(20))
		}
	})
	t.Run("created later, it is applied", func(t *testing.T) {
		create(t, kc.CoreV1().ConfigMaps("ingress-nginx"), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
			Data:       map[string]string{"proxy-body-size": "1k"},
		})
		framework.Eventually(t, convergeTimeout, "the ConfigMap's body limit", func() error {
			if r := post(4096); r.status != http.StatusRequestEntityTooLarge {
				return fmt.Errorf("POST of 4096 bytes: %s, want 413 past the ConfigMap's 1k", r)
			}
			return nil
		})
		if r := post(512); r.status != http.StatusOK {
			t.Errorf("POST of 512 bytes: %s, want 200", r)
		}
		if v, err := found(); err != nil || v != "1" {
			t.Errorf("ingress_xds_controller_configmap_found %q (%v), want 1", v, err)
		}
		if !strings.Contains(cp.Output(), "the controller ConfigMap is found") {
			t.Errorf("serve's log does not say the ConfigMap appeared:\n%s", cp.Tail(20))
		}
	})
}

// configMapFoundMetric is the value of ingress_xds_controller_configmap_found
// on serve's /metrics ("" when absent).
func configMapFoundMetric(address string) (string, error) {
	resp, err := http.Get("http://" + address + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "ingress_xds_controller_configmap_found{") {
			return line[strings.LastIndexByte(line, ' ')+1:], nil
		}
	}
	return "", nil
}

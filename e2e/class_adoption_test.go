package e2e

import (
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestIngressClassAdoption runs two control planes side by side on the same
// manifests, each with its own Envoy, as a migration from ingress-nginx has
// them: one with ingress-xds's defaults, one with ingress-nginx's class flags
// (--controller-class k8s.io/ingress-nginx --ingress-class nginx). Through
// each Envoy, the Ingresses of its class are served, by
// spec.ingressClassName or the legacy kubernetes.io/ingress.class
// annotation, and the other's are not. It mirrors ingress-nginx's
// test/e2e/settings/ingress_class.go ("With specific ingress-class flags":
// an Ingress of --controller-class's IngressClass and one of the
// --ingress-class annotation are served, another class's is not).
// Status, which file mode does not write, is TestTwoControllersSideBySide's
// (kube/class_envtest_test.go) against a real API server.
func TestIngressClassAdoption(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(backends...))
	writeManifest(t, dir, "classes.yaml", adoptionClassesYAML)

	shadow := framework.StartControlPlane(t, "--manifests", dir)
	adopting := framework.StartControlPlane(t, "--manifests", dir, "--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx")
	shadow.WaitReady(t)
	adopting.WaitReady(t)
	shadowEnvoy := framework.StartEnvoy(t, shadow)
	adoptingEnvoy := framework.StartEnvoy(t, adopting)
	t.Cleanup(func() {
		for _, e := range []*framework.Envoy{shadowEnvoy, adoptingEnvoy} {
			assertNoRejections(t, e, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
		}
	})

	framework.Eventually(t, convergeTimeout, "the shadow's first route", func() error {
		return shadowEnvoy.Expect("xds.example.net", "/", http.StatusOK, "alpha")
	})
	expectAll(t, shadowEnvoy, []framework.RouteCase{
		{Host: "xds-annotation.example.net", Path: "/", Status: http.StatusOK, Backend: "alpha"},
		{Host: "nginx.example.net", Path: "/", Status: http.StatusNotFound},
		{Host: "nginx-annotation.example.net", Path: "/", Status: http.StatusNotFound},
	})

	framework.Eventually(t, convergeTimeout, "the adopter's first route", func() error {
		return adoptingEnvoy.Expect("nginx.example.net", "/", http.StatusOK, "beta")
	})
	expectAll(t, adoptingEnvoy, []framework.RouteCase{
		{Host: "nginx-annotation.example.net", Path: "/", Status: http.StatusOK, Backend: "beta"},
		{Host: "xds.example.net", Path: "/", Status: http.StatusNotFound},
		{Host: "xds-annotation.example.net", Path: "/", Status: http.StatusNotFound},
	})
}

// adoptionClassesYAML: ingress-nginx's IngressClass and ours, and for each
// an Ingress naming it and one carrying its legacy annotation.
var adoptionClassesYAML = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: ingress-xds}
spec: {controller: ingress-xds.io/controller}
` + classIngress("nginx", "nginx.example.net", "ingressClassName: nginx", "", "beta") +
	classIngress("nginx-annotation", "nginx-annotation.example.net", "", "kubernetes.io/ingress.class: nginx", "beta") +
	classIngress("xds", "xds.example.net", "ingressClassName: ingress-xds", "", "alpha") +
	classIngress("xds-annotation", "xds-annotation.example.net", "", "kubernetes.io/ingress.class: ingress-xds", "alpha")

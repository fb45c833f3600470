package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPIClusterMode runs `ingress-xds serve --kubeconfig` against a
// real kube-apiserver with the standard channel's Gateway API CRDs, and
// real Envoy: an Ingress and an HTTPRoute created through the API server
// are served side by side, an edit of the Route (another backend, another
// path) is served, and its deletion withdraws it while the Ingress stays.
func TestGatewayAPIClusterMode(t *testing.T) {
	framework.Heavy(t)
	framework.IngressXDS(t)
	api := framework.StartAPIServerWith(t, framework.APIServerOptions{CRDs: []string{framework.GatewayAPICRDs(t)}})
	gw, err := gwclient.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cp, envoy := startLegacyIngress(t, api, "modern", "next")

	// Created after the control plane started: through the informers'
	// watches, not their initial list. The Gateway's listener is on the
	// port Envoy serves HTTP on (docs/gateway-api.md).
	createWebGateway(t, gw, cp)
	create(t, gw.GatewayV1().HTTPRoutes(namespace), clusterRoute("/", "modern"))
	framework.Eventually(t, convergeTimeout, "the HTTPRoute served", func() error {
		return envoy.Expect("modern.example.com", "/anything", http.StatusOK, "modern")
	})
	if err := envoy.Expect("legacy.example.com", "/", http.StatusOK, "legacy"); err != nil {
		t.Errorf("the Ingress beside the HTTPRoute: %v", err)
	}

	// An edit: the Route now sends /v2 to another Service, and nothing
	// else (the rest of the host answers 404).
	// The controller writes the Route's status meanwhile: an update
	// conflicting with it is made again on the Route as it now is.
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route, err := gw.GatewayV1().HTTPRoutes(namespace).Get(ctx, "modern", metav1.GetOptions{})
		if err != nil {
			return err
		}
		route.Spec = clusterRoute("/v2", "next").Spec
		_, err = gw.GatewayV1().HTTPRoutes(namespace).Update(ctx, route, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	took := framework.Eventually(t, convergeTimeout, "the edited HTTPRoute served", func() error {
		return envoy.Expect("modern.example.com", "/v2/x", http.StatusOK, "next")
	})
	t.Logf("measured: HTTPRoute update to Envoy behaviour in %s", took.Round(time.Millisecond))
	expectAll(t, envoy, []framework.RouteCase{
		{Host: "modern.example.com", Path: "/anything", Status: http.StatusNotFound, Backend: ""},
		{Host: "legacy.example.com", Path: "/", Status: http.StatusOK, Backend: "legacy"},
	})

	if err := gw.GatewayV1().HTTPRoutes(namespace).Delete(ctx, "modern", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "the deleted HTTPRoute withdrawn", func() error {
		return envoy.Expect("modern.example.com", "/v2/x", http.StatusNotFound, "")
	})
	if err := envoy.Expect("legacy.example.com", "/", http.StatusOK, "legacy"); err != nil {
		t.Errorf("the Ingress after the HTTPRoute's deletion: %v", err)
	}
}

// clusterRoute is the HTTPRoute "modern" of host modern.example.com on
// Gateway web, sending path's prefix to svc's port 80.
func clusterRoute(path, svc string) *gwapiv1.HTTPRoute {
	return &gwapiv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: "modern", Namespace: namespace},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "web"}}},
			Hostnames:       []gwapiv1.Hostname{"modern.example.com"},
			Rules: []gwapiv1.HTTPRouteRule{{
				Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{
					Type: ptr(gwapiv1.PathMatchPathPrefix), Value: ptr(path),
				}}},
				BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{
					BackendObjectReference: gwapiv1.BackendObjectReference{
						Name: gwapiv1.ObjectName(svc), Port: ptr(gwapiv1.PortNumber(80)),
					},
				}}},
			}},
		},
	}
}

// TestGatewayAPICRDsAfterStart: Gateway API's CRDs installed after the
// control plane started (as the chart's own CRDs may be, or an operator's
// later install) are watched without a restart of the process: serve
// starts over inside it, and the Envoy it feeds reconnects and serves the
// HTTPRoute, while the Ingress it served before goes on being served.
func TestGatewayAPICRDsAfterStart(t *testing.T) {
	framework.Heavy(t)
	framework.IngressXDS(t)
	api := framework.StartAPIServer(t)
	cp, envoy := startLegacyIngress(t, api, "modern")

	if _, err := envtest.InstallCRDs(api.Config, envtest.CRDInstallOptions{Paths: []string{framework.GatewayAPICRDs(t)}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	gw, err := gwclient.NewForConfig(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	createWebGateway(t, gw, cp)
	create(t, gw.GatewayV1().HTTPRoutes(namespace), clusterRoute("/", "modern"))
	framework.Eventually(t, 60*time.Second, "the HTTPRoute served", func() error {
		return envoy.Expect("modern.example.com", "/anything", http.StatusOK, "modern")
	})
	if err := envoy.Expect("legacy.example.com", "/", http.StatusOK, "legacy"); err != nil {
		t.Errorf("the Ingress after the control plane started over: %v", err)
	}
	if !strings.Contains(cp.Output(), "the Gateway API kinds served changed: starting over") {
		t.Error("the control plane never said it started over for the CRDs")
	}
}

// startLegacyIngress makes the cluster mode tests' start: the namespace,
// our IngressClass, echo backends "legacy" and the others named (each a
// Service of the namespace, on ports from 8080), the Ingress "legacy" of
// legacy.example.com, then the control plane on api and an Envoy, which
// serves the Ingress when it returns.
func startLegacyIngress(t *testing.T, api *framework.APIServer, backends ...string) (*framework.ControlPlane, *framework.Envoy) {
	t.Helper()
	kc := api.Client
	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	netns := framework.NewNetns(t)
	for i, name := range append([]string{"legacy"}, backends...) {
		startNetnsEcho(t, kc, netns, name, 8080+i)
	}
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("legacy", ptr(ourClass), "legacy.example.com", prefix("/", "legacy")))
	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig)
	framework.Eventually(t, 60*time.Second, "ingress-xds /readyz returns 200", cp.Ready)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "the Ingress served", func() error {
		return envoy.Expect("legacy.example.com", "/", http.StatusOK, "legacy")
	})
	return cp, envoy
}

// createWebGateway creates our GatewayClass "xds" and its Gateway "web",
// whose listener is on the port Envoy serves HTTP on (docs/gateway-api.md).
func createWebGateway(t *testing.T, gw gwclient.Interface, cp *framework.ControlPlane) {
	t.Helper()
	create(t, gw.GatewayV1().GatewayClasses(), &gwapiv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: "xds"},
		Spec:       gwapiv1.GatewayClassSpec{ControllerName: "ingress-xds.io/gateway-controller"},
	})
	create(t, gw.GatewayV1().Gateways(namespace), &gwapiv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "xds", Listeners: []gwapiv1.Listener{
			{Name: "http", Port: gwapiv1.PortNumber(cp.HTTPPort), Protocol: gwapiv1.HTTPProtocolType},
		}},
	})
}

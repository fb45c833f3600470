package kube

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestClusterSourceGatewayAPI runs the cluster source against a real API
// server with the standard channel's CRDs installed: Gateway API objects
// there before it starts arrive in State.Gateway with the initial list, a
// Route's spec change is seen (a new Gateway part, everything to take), a
// status write is not, and a deletion is.
func TestClusterSourceGatewayAPI(t *testing.T) {
	crds := framework.GatewayAPICRDs(t)
	cfg := startAPIServer(t, func(env *envtest.Environment) {
		env.CRDInstallOptions = envtest.CRDInstallOptions{Paths: []string{crds}, ErrorIfPathMissing: true}
	})
	client := kubernetes.NewForConfigOrDie(cfg)
	gw := gwclient.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kinds, err := ServedGatewayKinds(ctx, client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"BackendTLSPolicy", "GRPCRoute", "Gateway", "GatewayClass", "HTTPRoute", "ReferenceGrant", "TLSRoute"}; !slices.Equal(kinds, want) {
		t.Fatalf("served kinds = %v, want %v", kinds, want)
	}

	createNamespace(t, client, "app")
	mustCreate(t, func() error {
		_, err := gw.GatewayV1().GatewayClasses().Create(ctx, &gwapiv1.GatewayClass{
			ObjectMeta: metav1.ObjectMeta{Name: "xds"},
			Spec:       gwapiv1.GatewayClassSpec{ControllerName: "ingress-xds.io/gateway-controller"},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := gw.GatewayV1().Gateways("app").Create(ctx, &gwapiv1.Gateway{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: gwapiv1.GatewaySpec{GatewayClassName: "xds", Listeners: []gwapiv1.Listener{
				{Name: "http", Port: 80, Protocol: gwapiv1.HTTPProtocolType},
			}},
		}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := gw.GatewayV1().HTTPRoutes("app").Create(ctx, httpRoute("cafe", "cafe.example.com"), metav1.CreateOptions{})
		return err
	})

	factory := NewGatewayInformerFactory(gw, client, kinds)
	gateway := factory.Informers()
	factory.Start(ctx.Done())
	t.Cleanup(factory.Shutdown)
	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t)}
	runClusterSource(ctx, t, client, src, func(inf Informers) Informers {
		inf.Gateway = gateway
		return inf
	})
	src.TakeChanges()

	st := src.State()
	g := st.Gateway
	if g == nil {
		t.Fatal("no Gateway API objects in the State")
	}
	if len(g.GatewayClasses) != 1 || len(g.Gateways) != 1 || len(g.HTTPRoutes) != 1 || len(g.GRPCRoutes) != 0 {
		t.Fatalf("state has %d classes, %d gateways, %d HTTPRoutes, %d GRPCRoutes; want 1, 1, 1, 0",
			len(g.GatewayClasses), len(g.Gateways), len(g.HTTPRoutes), len(g.GRPCRoutes))
	}
	if got := g.HTTPRoutes[0].Spec.Hostnames; !slices.Equal(got, []gwapiv1.Hostname{"cafe.example.com"}) {
		t.Errorf("HTTPRoute hostnames = %v", got)
	}
	if g.HTTPRoutes[0].ManagedFields != nil {
		t.Error("cached HTTPRoute keeps its managed fields")
	}
	if again := src.State(); again.Gateway != g {
		t.Error("the Gateway part is a new value though nothing changed")
	}

	// A spec change: a new part with the new spec, and a change to take.
	route, err := gw.GatewayV1().HTTPRoutes("app").Get(ctx, "cafe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	route.Spec.Hostnames = []gwapiv1.Hostname{"tea.example.com"}
	if route, err = gw.GatewayV1().HTTPRoutes("app").Update(ctx, route, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitLong, "the HTTPRoute's new hostname in the State", func() error {
		routes := src.State().Gateway.HTTPRoutes
		if len(routes) != 1 || routes[0].ResourceVersion != route.ResourceVersion {
			return fmt.Errorf("routes %v", routes)
		}
		return nil
	})
	if c := src.TakeChanges(); !c.All {
		t.Errorf("changes after a Route's edit = %+v, want everything", c)
	}

	// A status write is not a change: the part stays the very same value
	// even after a later change to another informer's objects has been
	// seen (so the status event has been handled too, if only just).
	before := src.State().Gateway
	route.Status.Parents = []gwapiv1.RouteParentStatus{{
		ParentRef:      gwapiv1.ParentReference{Name: "web"},
		ControllerName: "ingress-xds.io/gateway-controller",
		Conditions: []metav1.Condition{{
			Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted",
			LastTransitionTime: metav1.Now(), ObservedGeneration: route.Generation,
		}},
	}}
	withStatus, err := gw.GatewayV1().HTTPRoutes("app").UpdateStatus(ctx, route, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen atomic.Bool
	reg, err := gateway.HTTPRoutes.AddEventHandler(statusSeen(withStatus.ResourceVersion, &seen))
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.HTTPRoutes.RemoveEventHandler(reg)
	eventually(t, waitLong, "the informer to have the status write", func() error {
		if !seen.Load() {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	// Handlers of one informer are called for each event in the order the
	// informer has them, but each handler from its own goroutine: wait a
	// moment for the source's, which would have marked the part dirty.
	time.Sleep(500 * time.Millisecond)
	if after := src.State().Gateway; after != before {
		t.Error("a status write made a new Gateway part")
	}

	// A ConfigMap a Gateway's tls.frontend names is watched and held,
	// created after the Gateway names it.
	web, err := gw.GatewayV1().Gateways("app").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Spec.TLS = &gwapiv1.GatewayTLSConfig{Frontend: &gwapiv1.FrontendTLSConfig{Default: gwapiv1.TLSConfig{
		Validation: &gwapiv1.FrontendTLSValidation{CACertificateRefs: []gwapiv1.ObjectReference{{Kind: "ConfigMap", Name: "client-ca"}}},
	}}}
	if _, err := gw.GatewayV1().Gateways("app").Update(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	caName := types.NamespacedName{Namespace: "app", Name: "client-ca"}
	eventually(t, waitLong, "the Gateway's new tls.frontend in the State", func() error {
		if gws := src.State().Gateway.Gateways; len(gws) != 1 || gws[0].Spec.TLS == nil {
			return fmt.Errorf("gateways %v", gws)
		}
		return nil
	})
	if _, held := src.State().ConfigMaps[caName]; held {
		t.Fatal("a ConfigMap that does not exist yet is in the State")
	}
	mustCreate(t, func() error {
		_, err := client.CoreV1().ConfigMaps("app").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "client-ca"}, Data: map[string]string{"ca.crt": "a bundle"},
		}, metav1.CreateOptions{})
		return err
	})
	eventually(t, waitLong, "the CA ConfigMap in the State", func() error {
		if cm := src.State().ConfigMaps[caName]; cm == nil || cm.Data["ca.crt"] != "a bundle" {
			return fmt.Errorf("ConfigMap %v", cm)
		}
		return nil
	})

	if err := gw.GatewayV1().HTTPRoutes("app").Delete(ctx, "cafe", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitLong, "the HTTPRoute gone from the State", func() error {
		if routes := src.State().Gateway.HTTPRoutes; len(routes) != 0 {
			return fmt.Errorf("routes %v", routes)
		}
		return nil
	})
}

// TestServedGatewayKindsWithoutCRDs: an API server without the Gateway API
// CRDs serves none of its kinds, which is no error.
func TestServedGatewayKindsWithoutCRDs(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(startAPIServer(t))
	kinds, err := ServedGatewayKinds(t.Context(), client.Discovery())
	if err != nil || len(kinds) != 0 {
		t.Fatalf("served kinds = %v, %v; want none and no error", kinds, err)
	}
}

func httpRoute(name, host string) *gwapiv1.HTTPRoute {
	return &gwapiv1.HTTPRoute{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "web"}}},
			Hostnames:       []gwapiv1.Hostname{gwapiv1.Hostname(host)},
		},
	}
}

// statusSeen sets seen once the informer hands out the object at
// resourceVersion rv, new or updated.
func statusSeen(rv string, seen *atomic.Bool) cache.ResourceEventHandlerFuncs {
	check := func(obj any) {
		if m, ok := obj.(metav1.Object); ok && m.GetResourceVersion() == rv {
			seen.Store(true)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    check,
		UpdateFunc: func(_, obj any) { check(obj) },
	}
}

package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

const (
	ourController   = "ingress-xds.io/gateway-controller"
	otherController = "example.com/other-controller"
)

// fanOut hands each status to several sinks.
type fanOut []GatewayStatusSink

func (f fanOut) Update(s kube.GatewayStatuses) {
	for _, sink := range f {
		sink.Update(s)
	}
}

// TestGatewayStatusWrittenByTheLeader runs the real pipeline (cluster
// source, translator, xDS server) against a real API server with the
// Gateway API CRDs, with two status writers campaigning for one lease:
// the leader writes the GatewayClass's, the Gateway's (with the Envoys'
// address) and the HTTPRoutes' status, a good Route accepted and a Route
// with a missing backend not resolved; another controller's parent entry
// and class are left alone; a condition whose status did not change keeps
// its transition time; the follower writes nothing.
func TestGatewayStatusWrittenByTheLeader(t *testing.T) {
	framework.Heavy(t)
	api := framework.StartAPIServerWith(t, framework.APIServerOptions{CRDs: []string{framework.GatewayAPICRDs(t)}})
	client := api.Client
	gw := gwclient.NewForConfigOrDie(api.Config)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	must(client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}))
	must(client.CoreV1().Services("app").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
	for name, controller := range map[string]string{"xds": ourController, "other": otherController} {
		must(gw.GatewayV1().GatewayClasses().Create(ctx, &gwapiv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: gwapiv1.GatewayClassSpec{ControllerName: gwapiv1.GatewayController(controller)}}, metav1.CreateOptions{}))
	}
	gateway, err := gw.GatewayV1().Gateways("app").Create(ctx, &gwapiv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "gw"},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "xds", Listeners: []gwapiv1.Listener{{Name: "http", Port: 8080, Protocol: gwapiv1.HTTPProtocolType}}}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	route := func(name, backend string) *gwapiv1.HTTPRoute {
		port := gwapiv1.PortNumber(80)
		return &gwapiv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gwapiv1.HTTPRouteSpec{
			CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "gw"}}},
			Hostnames:       []gwapiv1.Hostname{gwapiv1.Hostname(name + ".example.com")},
			Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{
				BackendObjectReference: gwapiv1.BackendObjectReference{Name: gwapiv1.ObjectName(backend), Port: &port}}}}}},
		}}
	}
	good, err := gw.GatewayV1().HTTPRoutes("app").Create(ctx, route("good", "web"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(gw.GatewayV1().HTTPRoutes("app").Create(ctx, route("bad", "missing"), metav1.CreateOptions{}))

	// What was there before: another controller's parent entry, and an
	// Accepted entry of ours and an Accepted Gateway from long ago, whose
	// transition times must survive (their status does not change).
	longAgo := metav1.NewTime(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC))
	theirs := gwapiv1.RouteParentStatus{
		ParentRef: gwapiv1.ParentReference{Name: "their-gw"}, ControllerName: otherController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 1, LastTransitionTime: longAgo}},
	}
	ours := gwapiv1.RouteParentStatus{
		ParentRef: gwapiv1.ParentReference{Name: "gw"}, ControllerName: ourController,
		Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 1, LastTransitionTime: longAgo}},
	}
	good.Status.Parents = []gwapiv1.RouteParentStatus{theirs, ours}
	must(gw.GatewayV1().HTTPRoutes("app").UpdateStatus(ctx, good, metav1.UpdateOptions{}))
	gateway.Status.Conditions = []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", ObservedGeneration: 1, LastTransitionTime: longAgo}}
	must(gw.GatewayV1().Gateways("app").UpdateStatus(ctx, gateway, metav1.UpdateOptions{}))

	// The pipeline, as serve wires it in cluster mode.
	logger := slog.New(slog.DiscardHandler)
	kinds, err := kube.ServedGatewayKinds(ctx, client.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	factories := kube.NewInformerFactories(client)
	gwFactory := kube.NewGatewayInformerFactory(gw, client, kinds)
	informers := factories.Informers()
	informers.Gateway = gwFactory.Informers()
	src := &kube.ClusterSource{Informers: informers, Filter: kube.ClassFilter{}, Logger: logger}
	addrs, err := kube.NewStaticAddresses([]string{"192.0.2.10"})
	if err != nil {
		t.Fatal(err)
	}
	var writers []*kube.GatewayStatusWriter
	var sinks fanOut
	for range 2 {
		w := kube.NewGatewayStatusWriter(gwclient.NewForConfigOrDie(api.Config), ourController, informers.Gateway, addrs, nil, 2, logger)
		writers = append(writers, w)
		sinks = append(sinks, w)
	}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	p := New(Options{Logger: logger, Source: src, Translator: tr, Server: xds.NewServer(logger), GatewayStatus: sinks})

	var wg sync.WaitGroup
	rebuild := make(chan struct{}, 1)
	wg.Go(func() {
		if err := src.Run(ctx, func() {
			select {
			case rebuild <- struct{}{}:
			default:
			}
		}); err != nil {
			t.Errorf("source: %v", err)
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-rebuild:
				p.Rebuild(ctx)
			}
		}
	})
	identities := []string{"replica-a", "replica-b"}
	for i, w := range writers {
		w.Hold = p.Published()
		wg.Go(func() { _ = w.Run(ctx) })
		wg.Go(func() { _ = addrs.Run(ctx, w.AddressesChanged) })
		election := &kube.LeaderElection{Client: client, Namespace: "app", Name: "gateway-status", Identity: identities[i],
			LeaseDuration: 4 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond, Logger: logger}
		wg.Go(func() {
			if err := election.Run(ctx, w.Lead); err != nil {
				t.Errorf("election: %v", err)
			}
		})
	}
	factories.Start(ctx.Done())
	gwFactory.Start(ctx.Done())
	defer func() {
		cancel()
		wg.Wait()
		factories.Shutdown()
		gwFactory.Shutdown()
	}()

	condition := func(conds []metav1.Condition, typ string, status metav1.ConditionStatus, reason string, gen int64) error {
		c := meta.FindStatusCondition(conds, typ)
		if c == nil || c.Status != status || c.Reason != reason || c.ObservedGeneration != gen {
			return fmt.Errorf("%s = %+v, want %s %s at generation %d", typ, c, status, reason, gen)
		}
		return nil
	}
	ourParent := func(r *gwapiv1.HTTPRoute) (*gwapiv1.RouteParentStatus, error) {
		for i, p := range r.Status.Parents {
			if p.ControllerName == ourController {
				return &r.Status.Parents[i], nil
			}
		}
		return nil, fmt.Errorf("no parent entry of ours: %+v", r.Status.Parents)
	}
	getRoute := func(name string) *gwapiv1.HTTPRoute {
		r, err := gw.GatewayV1().HTTPRoutes("app").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	framework.Eventually(t, waitLong, "our GatewayClass accepted", func() error {
		c, err := gw.GatewayV1().GatewayClasses().Get(ctx, "xds", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return condition(c.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted", c.Generation)
	})
	framework.Eventually(t, waitLong, "the Gateway accepted and programmed, with the address and both Routes", func() error {
		g, err := gw.GatewayV1().Gateways("app").Get(ctx, "gw", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := condition(g.Status.Conditions, "Accepted", metav1.ConditionTrue, "Accepted", g.Generation); err != nil {
			return err
		}
		if err := condition(g.Status.Conditions, "Programmed", metav1.ConditionTrue, "Programmed", g.Generation); err != nil {
			return err
		}
		if a := g.Status.Addresses; len(a) != 1 || a[0].Value != "192.0.2.10" || a[0].Type == nil || *a[0].Type != gwapiv1.IPAddressType {
			return fmt.Errorf("addresses %+v", a)
		}
		if l := g.Status.Listeners; len(l) != 1 || l[0].Name != "http" || l[0].AttachedRoutes != 2 {
			return fmt.Errorf("listeners %+v", l)
		}
		if c := meta.FindStatusCondition(g.Status.Conditions, "Accepted"); !c.LastTransitionTime.Equal(&longAgo) {
			return fmt.Errorf("Accepted moved on from %v to %v, though it stayed True", longAgo, c.LastTransitionTime)
		}
		return nil
	})
	framework.Eventually(t, waitLong, "the good Route accepted and resolved, beside the other controller's entry", func() error {
		r := getRoute("good")
		p, err := ourParent(r)
		if err != nil {
			return err
		}
		if err := condition(p.Conditions, "Accepted", metav1.ConditionTrue, "Accepted", r.Generation); err != nil {
			return err
		}
		if err := condition(p.Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs", r.Generation); err != nil {
			return err
		}
		if c := meta.FindStatusCondition(p.Conditions, "Accepted"); !c.LastTransitionTime.Equal(&longAgo) {
			return fmt.Errorf("Accepted moved on from %v to %v, though it stayed True", longAgo, c.LastTransitionTime)
		}
		if len(r.Status.Parents) != 2 || r.Status.Parents[0].ControllerName != otherController ||
			r.Status.Parents[0].ParentRef.Name != "their-gw" || !r.Status.Parents[0].Conditions[0].LastTransitionTime.Equal(&longAgo) {
			return fmt.Errorf("parents %+v, want the other controller's first, as it was", r.Status.Parents)
		}
		return nil
	})
	framework.Eventually(t, waitLong, "the Route with a missing backend accepted, its references not resolved", func() error {
		r := getRoute("bad")
		p, err := ourParent(r)
		if err != nil {
			return err
		}
		if err := condition(p.Conditions, "Accepted", metav1.ConditionTrue, "Accepted", r.Generation); err != nil {
			return err
		}
		return condition(p.Conditions, "ResolvedRefs", metav1.ConditionFalse, "BackendNotFound", r.Generation)
	})

	// One replica wrote all that; the other, following, nothing.
	lease, err := client.CoordinationV1().Leases("app").Get(ctx, "gateway-status", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leader := 0
	if h := lease.Spec.HolderIdentity; h != nil && *h == identities[1] {
		leader = 1
	}
	if writers[leader].Writes() == 0 || writers[1-leader].Writes() != 0 {
		t.Errorf("writes: leader %s %d, follower %d; want some and none", identities[leader], writers[leader].Writes(), writers[1-leader].Writes())
	}

	// The missing backend comes: the Route's references resolve.
	must(client.CoreV1().Services("app").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "missing"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{}))
	framework.Eventually(t, waitLong, "the Route's backend resolved", func() error {
		p, err := ourParent(getRoute("bad"))
		if err != nil {
			return err
		}
		return condition(p.Conditions, "ResolvedRefs", metav1.ConditionTrue, "ResolvedRefs", 1)
	})
	// A spec change: the conditions observe the new generation.
	r := getRoute("good")
	r.Spec.Hostnames = append(r.Spec.Hostnames, "good2.example.com")
	must(gw.GatewayV1().HTTPRoutes("app").Update(ctx, r, metav1.UpdateOptions{}))
	framework.Eventually(t, waitLong, "the good Route's status at its new generation", func() error {
		r := getRoute("good")
		if r.Generation < 2 {
			return fmt.Errorf("generation %d", r.Generation)
		}
		p, err := ourParent(r)
		if err != nil {
			return err
		}
		return condition(p.Conditions, "Accepted", metav1.ConditionTrue, "Accepted", r.Generation)
	})

	// The bad Route moves to another controller's Gateway: our entry goes,
	// leaving status.parents an empty list (the CRDs refuse it null).
	must(gw.GatewayV1().Gateways("app").Create(ctx, &gwapiv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "their-gw"},
		Spec: gwapiv1.GatewaySpec{GatewayClassName: "other", Listeners: []gwapiv1.Listener{{Name: "http", Port: 8080, Protocol: gwapiv1.HTTPProtocolType}}}},
		metav1.CreateOptions{}))
	r = getRoute("bad")
	r.Spec.ParentRefs = []gwapiv1.ParentReference{{Name: "their-gw"}}
	must(gw.GatewayV1().HTTPRoutes("app").Update(ctx, r, metav1.UpdateOptions{}))
	framework.Eventually(t, waitLong, "our entry gone from the Route that moved", func() error {
		if p := getRoute("bad").Status.Parents; len(p) != 0 {
			return fmt.Errorf("parents %+v", p)
		}
		return nil
	})

	// The other controller's class was left as the API server made it.
	other, err := gw.GatewayV1().GatewayClasses().Get(ctx, "other", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(other.Status.Conditions, "Accepted"); c != nil && c.Status != metav1.ConditionUnknown {
		t.Errorf("the other controller's class has Accepted %+v", c)
	}
	// Our writes come back as events and compare equal: a handful of
	// writes, not a loop (class 1, Gateway 1, Routes 2, the backend and
	// the edit and the move 1 each, and a conflict's retry or two).
	if n := writers[leader].Writes(); n > 13 {
		t.Errorf("%d writes for a handful of changes", n)
	}
	if writers[1-leader].Writes() != 0 {
		t.Errorf("the follower wrote %d times", writers[1-leader].Writes())
	}
}

const waitLong = 90 * time.Second

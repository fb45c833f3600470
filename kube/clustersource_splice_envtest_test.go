package kube

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestClusterSourceSplicesIngressesAndServices makes a random series of
// changes against a real API server (Ingresses of our class and another's
// created, edited, moved between classes and deleted, an IngressClass
// taking our name away and giving it back, Services created, edited and
// deleted) and checks after each that the State, which looks up only the
// Ingresses and Services that changed, holds what listing everything again
// gives: the owned Ingresses in name order, and every Service.
func TestClusterSourceSplicesIngressesAndServices(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ns := range []string{"a", "b"} {
		createNamespace(t, client, ns)
	}
	src := &ClusterSource{Filter: ClassFilter{}, Logger: testLogger(t)}
	runClusterSource(ctx, t, client, src, nil)
	filter := src.Filter

	rng := rand.New(rand.NewPCG(18, 3))
	ours, other := DefaultClassName, "nginx"
	namespaces := []string{"a", "b"}
	pick := func(prefix string) (string, string) {
		return namespaces[rng.IntN(2)], fmt.Sprintf("%s%d", prefix, rng.IntN(12))
	}
	for step := range 60 {
		var what string
		switch op := rng.IntN(10); {
		case op < 5: // an Ingress created, edited (or moved to a class), deleted
			ns, name := pick("ing-")
			class := ours
			if rng.IntN(4) == 0 {
				class = other
			}
			what = applyIngress(ctx, t, client, ns, name, class, fmt.Sprintf("svc%d", rng.IntN(20)), rng.IntN(4) == 0)
		case op < 9: // a Service created, edited or deleted
			ns, name := pick("svc")
			what = applyService(ctx, t, client, ns, name, int32(80+rng.IntN(3)), rng.IntN(4) == 0)
		default: // our class name taken by another controller, or given back
			what = toggleClass(ctx, t, client, ours)
		}
		eventually(t, 30*time.Second, fmt.Sprintf("step %d (%s): the state to hold what listing gives", step, what), func() error {
			return sameAsListing(ctx, t, client, filter, src.State())
		})
	}
}

// applyIngress creates name (or edits it) with one rule to svc under class,
// or deletes it, and says which.
func applyIngress(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name, class, svc string, remove bool) string {
	t.Helper()
	applyOrDelete(ctx, t, client.NetworkingV1().Ingresses(ns), &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, remove,
		func(ing *networkingv1.Ingress) {
			ing.Spec = networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: 80}},
			}}
		})
	if remove {
		return "deleted Ingress " + ns + "/" + name
	}
	return fmt.Sprintf("Ingress %s/%s of class %s to %s", ns, name, class, svc)
}

// applyService creates name (or edits it) with one port, or deletes it,
// and says which.
func applyService(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, port int32, remove bool) string {
	t.Helper()
	applyOrDelete(ctx, t, client.CoreV1().Services(ns), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}, remove,
		func(svc *corev1.Service) { svc.Spec.Ports = []corev1.ServicePort{{Port: port}} })
	if remove {
		return "deleted Service " + ns + "/" + name
	}
	return fmt.Sprintf("Service %s/%s port %d", ns, name, port)
}

// typedClient is what applyOrDelete needs of a typed client of one kind
// (client-go's IngressInterface, ServiceInterface ...).
type typedClient[P metav1.Object] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (P, error)
	Create(ctx context.Context, obj P, opts metav1.CreateOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// applyOrDelete deletes the object named as fresh is (if it exists), or
// edits it, or fresh when there is none, and writes it.
func applyOrDelete[P metav1.Object](ctx context.Context, t *testing.T, client typedClient[P], fresh P, remove bool, edit func(P)) {
	t.Helper()
	if remove {
		if err := client.Delete(ctx, fresh.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return
	}
	obj, err := client.Get(ctx, fresh.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		obj, err = fresh, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	edit(obj)
	if obj.GetResourceVersion() == "" {
		_, err = client.Create(ctx, obj, metav1.CreateOptions{})
	} else {
		_, err = client.Update(ctx, obj, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// toggleClass creates an IngressClass of the name ours for another
// controller (which takes the name from us), or deletes it.
func toggleClass(ctx context.Context, t *testing.T, client kubernetes.Interface, ours string) string {
	t.Helper()
	classes := client.NetworkingV1().IngressClasses()
	err := classes.Delete(ctx, ours, metav1.DeleteOptions{})
	if err == nil {
		return "IngressClass " + ours + " deleted"
	}
	if !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if _, err := classes.Create(ctx, &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: ours},
		Spec:       networkingv1.IngressClassSpec{Controller: "example.com/another"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return "IngressClass " + ours + " taken by another controller"
}

// sameAsListing compares st's Ingresses and Services with what listing
// them from the API server gives.
func sameAsListing(ctx context.Context, t *testing.T, client kubernetes.Interface, filter ClassFilter, st *State) error {
	t.Helper()
	ingList, err := client.NetworkingV1().Ingresses("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	classList, err := client.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ingresses []*networkingv1.Ingress
	for i := range ingList.Items {
		ingresses = append(ingresses, &ingList.Items[i])
	}
	var classes []*networkingv1.IngressClass
	for i := range classList.Items {
		classes = append(classes, &classList.Items[i])
	}
	version := func(ing *networkingv1.Ingress) string {
		return ing.Namespace + "/" + ing.Name + "@" + ing.ResourceVersion
	}
	want := ownedIngresses(ingresses, classes, filter)
	got := st.Ingresses
	if !slices.Equal(keepAll(got, version), keepAll(want, version)) {
		return fmt.Errorf("ingresses %v, listing gives %v", keepAll(got, version), keepAll(want, version))
	}
	svcList, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSvc := map[types.NamespacedName]int32{}
	for _, s := range svcList.Items {
		if s.Namespace == "a" || s.Namespace == "b" {
			wantSvc[types.NamespacedName{Namespace: s.Namespace, Name: s.Name}] = s.Spec.Ports[0].Port
		}
	}
	gotSvc := map[types.NamespacedName]int32{}
	for key, s := range st.Services {
		if key.Namespace == "a" || key.Namespace == "b" {
			gotSvc[key] = s.Ports[0].Port
		}
	}
	if fmt.Sprint(gotSvc) != fmt.Sprint(wantSvc) {
		return fmt.Errorf("services %v, listing gives %v", gotSvc, wantSvc)
	}
	return nil
}

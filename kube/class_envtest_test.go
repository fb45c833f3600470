package kube

import (
	"context"
	"fmt"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestTwoControllersSideBySide runs two controllers' worth of this package
// against one real API server, as a migration from ingress-nginx has them:
// one with ingress-xds's defaults (its own class, "shadow"), one adopting
// ingress-nginx's class (--controller-class k8s.io/ingress-nginx
// --ingress-class nginx --watch-ingress-without-class). Each serves (its
// ClusterSource's State) and writes status for what it owns and nothing
// else, and an Ingress moved from one class to the other moves with it.
// As in ingress-nginx's test/e2e/settings/ingress_class.go, by name, by the
// legacy annotation, and without a class under --watch-ingress-without-class.
func TestTwoControllersSideBySide(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := "apps"
	createNamespace(t, client, ns)
	createIngressClass(t, client, "nginx", "k8s.io/ingress-nginx")
	createIngressClass(t, client, DefaultClassName, DefaultControllerName)
	createIngress(t, client, ns, "nginx-by-name", "nginx")
	createLegacyIngress(t, client, ns, "nginx-by-annotation", "nginx")
	createIngress(t, client, ns, "classless", "")
	createIngress(t, client, ns, "xds-by-name", DefaultClassName)
	createLegacyIngress(t, client, ns, "xds-by-annotation", DefaultClassName)
	createIngress(t, client, ns, "moving", DefaultClassName)
	createIngress(t, client, ns, "someone-else", "no-such-class")

	type controller struct {
		name    string
		filter  ClassFilter
		address string
		source  *ClusterSource
	}
	controllers := []*controller{
		{name: "shadow", filter: ClassFilter{}, address: "192.0.2.10"},
		{name: "adopting", filter: ClassFilter{ClassName: "nginx", ControllerName: "k8s.io/ingress-nginx", WatchClassless: true}, address: "192.0.2.20"},
	}
	for _, c := range controllers {
		addrs, err := NewStaticAddresses([]string{c.address})
		if err != nil {
			t.Fatal(err)
		}
		runWriter(t, NewStatusWriter(client, c.filter, addrs, nil, 2, testLogger(t)), true)
		c.source = &ClusterSource{Filter: c.filter, Logger: testLogger(t)}
		runClusterSource(ctx, t, client, c.source, nil)
	}
	shadow, adopting := controllers[0], controllers[1]

	// check waits until each Ingress has the status of the one controller
	// that owns it (none for "someone-else"), and each controller's State
	// holds exactly the Ingresses it owns.
	check := func(what string, owner map[string]*controller) {
		t.Helper()
		for _, name := range []string{"nginx-by-name", "nginx-by-annotation", "classless", "xds-by-name", "xds-by-annotation", "moving", "someone-else"} {
			var want []string
			if c := owner[name]; c != nil {
				want = []string{c.address}
			}
			eventually(t, waitLong, what+": status of "+name, func() error { return statusIs(client, ns, name, want...) })
		}
		for _, c := range controllers {
			var want []string
			for name, o := range owner {
				if o == c {
					want = append(want, name)
				}
			}
			slices.Sort(want)
			eventually(t, waitLong, what+": the Ingresses "+c.name+" serves", func() error {
				var got []string
				for _, ing := range c.source.State().Ingresses {
					got = append(got, ing.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					return fmt.Errorf("%v, want %v", got, want)
				}
				return nil
			})
		}
	}
	check("side by side", map[string]*controller{
		"nginx-by-name": adopting, "nginx-by-annotation": adopting, "classless": adopting,
		"xds-by-name": shadow, "xds-by-annotation": shadow, "moving": shadow,
	})

	// Switching one Ingress over: it names ingress-nginx's class now.
	moving, err := getIngress(client, ns, "moving")
	if err != nil {
		t.Fatal(err)
	}
	moving.Spec.IngressClassName = ptr.To("nginx")
	if _, err := client.NetworkingV1().Ingresses(ns).Update(ctx, moving, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check("after the switch", map[string]*controller{
		"nginx-by-name": adopting, "nginx-by-annotation": adopting, "classless": adopting, "moving": adopting,
		"xds-by-name": shadow, "xds-by-annotation": shadow,
	})
}

// createLegacyIngress creates a class-less Ingress carrying the legacy
// kubernetes.io/ingress.class annotation.
func createLegacyIngress(t *testing.T, client kubernetes.Interface, namespace, name, class string) {
	t.Helper()
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Annotations: map[string]string{legacyClassAnnotation: class}},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
	if _, err := client.NetworkingV1().Ingresses(namespace).Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ingress %s/%s: %v", namespace, name, err)
	}
}

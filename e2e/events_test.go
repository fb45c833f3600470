package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestClusterModeEvents checks that translation problems reach users as
// Warning Events on the Ingress, in a real API server: for Ingresses there
// before the control plane starts and for one created afterwards, and
// never for an Ingress of another class.
func TestClusterModeEvents(t *testing.T) {
	api := startClusterMode(t)
	kc := api.Client

	create(t, kc.CoreV1().Namespaces(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(ourClass, "ingress-xds.io/controller"))
	create(t, kc.NetworkingV1().IngressClasses(), ingressClass(otherClass, "example.com/other"))
	create(t, kc.CoreV1().Services(namespace), service("coffee", 8080))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("foreign", ptr(otherClass), "foreign.example.com", prefix("/", "missing")))
	create(t, kc.NetworkingV1().Ingresses(namespace), ingress("orphan", ptr(ourClass), "orphan.example.com",
		prefix("/coffee", "coffee"), prefix("/tea", "missing")))
	noCert := ingress("no-cert", ptr(ourClass), "no-cert.example.com", prefix("/", "coffee"))
	noCert.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"no-cert.example.com"}, SecretName: "absent"}}
	create(t, kc.NetworkingV1().Ingresses(namespace), noCert)

	cp := framework.StartControlPlane(t, "--kubeconfig", api.Kubeconfig)
	framework.Eventually(t, 60*time.Second, "ingress-xds /readyz returns 200", cp.Ready)

	t.Run("ingresses present at start", func(t *testing.T) {
		waitForWarning(t, kc, "orphan", "ServiceNotFound", "spec.rules[0].http.paths[1]", namespace+"/missing")
		waitForWarning(t, kc, "no-cert", "InvalidTLSSecret", "spec.tls[0]", "absent")
	})

	t.Run("an ingress created later", func(t *testing.T) {
		create(t, kc.NetworkingV1().Ingresses(namespace), ingress("later", ptr(ourClass), "later.example.com", prefix("/", "missing-too")))
		took := waitForWarning(t, kc, "later", "ServiceNotFound", "spec.rules[0].http.paths[0]", namespace+"/missing-too")
		t.Logf("measured: Ingress creation to Warning Event in %s", took.Round(time.Millisecond))
	})

	t.Run("no event for an ingress of another class", func(t *testing.T) {
		// foreign was there from the start, with the same fault as orphan,
		// and every Event above came from a translation that saw it.
		events, err := ingressEvents(t, kc, "foreign")
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			t.Errorf("event on an Ingress of another class: %s %s: %s", ev.Type, ev.Reason, ev.Message)
		}
	})
}

// waitForWarning waits for a Warning Event with reason on the Ingress name,
// from ingress-xds, whose message contains each of parts, and returns how
// long that took.
func waitForWarning(t *testing.T, kc kubernetes.Interface, name, reason string, parts ...string) time.Duration {
	t.Helper()
	ing, err := kc.NetworkingV1().Ingresses(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return framework.Eventually(t, convergeTimeout, fmt.Sprintf("%s event on ingress %s", reason, name), func() error {
		events, err := ingressEvents(t, kc, name)
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range events {
			seen = append(seen, ev.Reason+": "+ev.Message)
			if ev.Reason != reason || ev.Type != corev1.EventTypeWarning {
				continue
			}
			if ev.InvolvedObject.Kind != "Ingress" || ev.InvolvedObject.UID != ing.UID {
				return fmt.Errorf("event %s is about %s %s (uid %s), want Ingress uid %s", ev.Name, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.InvolvedObject.UID, ing.UID)
			}
			if ev.Source.Component != "ingress-xds" {
				return fmt.Errorf("event %s comes from %q, want ingress-xds", ev.Name, ev.Source.Component)
			}
			for _, part := range parts {
				if !strings.Contains(ev.Message, part) {
					return fmt.Errorf("event %s: message %q does not mention %q", ev.Name, ev.Message, part)
				}
			}
			return nil
		}
		return fmt.Errorf("no Warning %s event on ingress %s; events: %q", reason, name, seen)
	})
}

// ingressEvents lists the Events about the Ingress name.
func ingressEvents(t *testing.T, kc kubernetes.Interface, name string) ([]corev1.Event, error) {
	list, err := kc.CoreV1().Events(namespace).List(t.Context(), metav1.ListOptions{
		FieldSelector: fields.AndSelectors(
			fields.OneTermEqualSelector("involvedObject.kind", "Ingress"),
			fields.OneTermEqualSelector("involvedObject.name", name),
		).String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

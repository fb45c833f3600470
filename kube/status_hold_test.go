package kube

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStatusHeldUntilReleased: a leading writer with a Hold writes no
// status while it is held (serve holds it until the first snapshot is
// published), even with every cache synced and every Ingress wanting an
// address, and writes them all once it is released.
func TestStatusHeldUntilReleased(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := "held"
	createNamespace(t, client, ns)
	createIngressClass(t, client, "held", "test.example/held")
	filter := ClassFilter{ClassName: "held", ControllerName: "test.example/held"}
	const n = 5
	for i := range n {
		createIngress(t, client, ns, fmt.Sprintf("ing-%d", i), "held")
	}
	addrs, err := NewStaticAddresses([]string{"192.0.2.20"})
	if err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	w := NewStatusWriter(client, filter, addrs, nil, 4, testLogger(t))
	w.Hold = hold
	runWriter(t, w, true)

	// Lead has passed the sync and waits on the hold: nothing is queued,
	// so nothing can be written.
	eventually(t, waitLong, "the writer holds its writes back", func() error {
		if !w.holding.Load() {
			return fmt.Errorf("not holding")
		}
		return nil
	})
	w.mu.Lock()
	queued := w.queue != nil
	w.mu.Unlock()
	if queued {
		t.Fatal("a work queue is installed while the writes are held")
	}
	list, err := client.NetworkingV1().Ingresses(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ing := range list.Items {
		if len(ing.Status.LoadBalancer.Ingress) > 0 {
			t.Errorf("%s has a status address while the writes are held", ing.Name)
		}
	}
	if got := w.Writes(); got != 0 {
		t.Errorf("%d writes while held", got)
	}

	close(hold)
	for i := range n {
		name := fmt.Sprintf("ing-%d", i)
		eventually(t, waitLong, name+" gets its status once released", func() error {
			return statusIs(client, ns, name, "192.0.2.20")
		})
	}
	writesReach(t, w, n, "the released writer")
}

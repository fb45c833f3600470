package kube

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStatusRateLimitAndSkips checks that every write waits for the limiter,
// that writes run in parallel, and that Ingresses whose status is already
// right cost no write at all.
func TestStatusRateLimitAndSkips(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := "limits"
	createNamespace(t, client, ns)
	createIngressClass(t, client, "limited", "test.example/limited")
	filter := ClassFilter{ClassName: "limited", ControllerName: "test.example/limited"}
	const n = 20
	for i := range n {
		createIngress(t, client, ns, fmt.Sprintf("ing-%02d", i), "limited")
	}
	addrs, err := NewStaticAddresses([]string{"192.0.2.10"})
	if err != nil {
		t.Fatal(err)
	}
	countWritten := func() (int, error) {
		list, err := client.NetworkingV1().Ingresses(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		written := 0
		for _, ing := range list.Items {
			if len(ing.Status.LoadBalancer.Ingress) > 0 {
				written++
			}
		}
		return written, nil
	}

	const workers = 4
	g := newGate()
	w := NewStatusWriter(client, filter, addrs, g, workers, testLogger(t))
	stop := runWriter(t, w, true)

	// Three tokens: three writes, and then every worker stuck waiting for
	// the next token, which proves both the limit and the parallelism.
	g.release(3)
	eventually(t, waitLong, "three writes, then all workers waiting on the limiter", func() error {
		if got := w.Writes(); got != 3 {
			return fmt.Errorf("%d writes", got)
		}
		if got := g.waiting.Load(); got != workers {
			return fmt.Errorf("%d of %d workers waiting on the limiter", got, workers)
		}
		return nil
	})
	if got, err := countWritten(); err != nil || got != 3 {
		t.Fatalf("with three tokens, %d ingresses have status (err %v), want 3", got, err)
	}

	g.release(n - 3)
	eventually(t, waitLong, "every ingress written once the limiter allows it", func() error {
		got, err := countWritten()
		if err == nil && got != n {
			err = fmt.Errorf("%d of %d ingresses have status", got, n)
		}
		return err
	})
	writesReach(t, w, n, "the writer")
	stop()

	// A new term (as after a failover) looks at every Ingress again. With
	// one worker the queue is worked in order, so once the Ingress created
	// after the start has its status, the other twenty have been looked at:
	// they were right already, and cost neither a token nor a write.
	g2 := newGate()
	g2.release(100)
	w2 := NewStatusWriter(client, filter, addrs, g2, 1, testLogger(t))
	runWriter(t, w2, true)
	eventually(t, waitLong, "the new term has queued every ingress", func() error {
		w2.mu.Lock()
		defer w2.mu.Unlock()
		if w2.queue == nil {
			return fmt.Errorf("not leading yet")
		}
		return nil
	})
	createIngress(t, client, ns, "late", "limited")
	eventually(t, waitLong, "the late ingress gets its status", func() error {
		return statusIs(client, ns, "late", "192.0.2.10")
	})
	// After a restart with n Ingresses already right and one new: one
	// write, one token.
	writesReach(t, w2, 1, "the restarted writer")
	if waits := g2.waits.Load(); waits != 1 {
		t.Errorf("the restarted writer asked the limiter %d times, want 1", waits)
	}
}

package load

import (
	"context"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Create writes every object of the workload once, and a second run
// against the same cluster finds them all there instead of failing.
func TestCreateIsCompleteAndRepeatable(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	w := Workload{N: 4, Namespace: "load"}
	log := slog.New(slog.DiscardHandler)

	stats, err := Create(ctx, client, nil, w, 3, log)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Objects != w.Objects() || stats.Existing != 0 {
		t.Errorf("first run: %d objects, %d existing; want %d, 0", stats.Objects, stats.Existing, w.Objects())
	}
	services, _ := client.CoreV1().Services("load").List(ctx, metav1.ListOptions{})
	slices, _ := client.DiscoveryV1().EndpointSlices("load").List(ctx, metav1.ListOptions{})
	ingresses, _ := client.NetworkingV1().Ingresses("load").List(ctx, metav1.ListOptions{})
	classes, _ := client.NetworkingV1().IngressClasses().List(ctx, metav1.ListOptions{})
	if len(services.Items) != w.Services() || len(slices.Items) != w.Services() || len(ingresses.Items) != w.N || len(classes.Items) != 1 {
		t.Errorf("created %d Services, %d slices, %d Ingresses, %d classes; want %d, %d, %d, 1",
			len(services.Items), len(slices.Items), len(ingresses.Items), len(classes.Items), w.Services(), w.Services(), w.N)
	}

	again, err := Create(ctx, client, nil, w, 3, log)
	if err != nil {
		t.Fatalf("second run: %v", err)
	}
	if again.Existing != w.Objects() {
		t.Errorf("second run found %d existing objects, want all %d", again.Existing, w.Objects())
	}
}

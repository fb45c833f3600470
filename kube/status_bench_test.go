package kube

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// switchable is an AddressSource the benchmark changes at will: it hands
// the writer's change callback over on changed.
type switchable struct {
	tracker addressTracker
	changed chan func()
}

func (s *switchable) Run(ctx context.Context, changed func()) error {
	s.tracker.set(nil)
	s.changed <- changed
	changed()
	<-ctx.Done()
	return nil
}

func (s *switchable) Addresses() []networkingv1.IngressLoadBalancerIngress { return s.tracker.get() }

// BenchmarkStatusWriter measures how long the status writer takes to address
// every Ingress of a cluster, with 16 workers (serve's default) and a token
// bucket of qps writes/s in bursts of 2*qps (250 and 500 by default), against a real kube-apiserver: each iteration
// changes the address, so every Ingress needs a write. Run it with
//
//	go test -run '^$' -bench BenchmarkStatusWriter -benchtime 1x ./kube
//
// Results are in docs/status-benchmark.md.
func BenchmarkStatusWriter(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		// 250 is serve's default; 1000 shows what the API server takes
		// when the client-side limit is not what bounds the time.
		for _, qps := range []int{250, 1000} {
			b.Run(fmt.Sprintf("ingresses=%d/qps=%d", n, qps), func(b *testing.B) { benchmarkStatus(b, n, qps) })
		}
	}
}

func benchmarkStatus(b *testing.B, n, qps int) {
	cfg := startAPIServer(b)
	client := kubernetes.NewForConfigOrDie(cfg)
	createNamespace(b, client, "bench")
	createIngressClass(b, client, "bench", "test.example/bench")
	start := time.Now()
	createIngresses(b, client, "bench", "bench", n)
	b.Logf("created %d ingresses in %s", n, time.Since(start).Round(time.Millisecond))

	// As serve does it: a client without client-go's limit, paced by the
	// writer's token bucket.
	statusCfg := rest.CopyConfig(cfg)
	statusCfg.QPS = -1
	src := &switchable{changed: make(chan func(), 1)}
	w := NewStatusWriter(kubernetes.NewForConfigOrDie(statusCfg), ClassFilter{ClassName: "bench", ControllerName: "test.example/bench"},
		src, flowcontrol.NewTokenBucketRateLimiter(float32(qps), 2*qps), 16, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runWriter(b, w, true)
	notify := <-src.changed

	b.ResetTimer()
	for i := range b.N {
		before := w.Writes()
		start := time.Now()
		src.tracker.set([]networkingv1.IngressLoadBalancerIngress{{IP: fmt.Sprintf("192.0.2.%d", i%250+1)}})
		notify()
		eventually(b, 10*time.Minute, "every ingress written", func() error {
			if got := w.Writes() - before; got < int64(n) {
				return fmt.Errorf("%d of %d written", got, n)
			}
			return nil
		})
		took := time.Since(start)
		b.ReportMetric(took.Seconds(), "s/all-ingresses")
		b.ReportMetric(float64(n)/took.Seconds(), "ingresses/s")
	}
	b.StopTimer()
	list, err := client.NetworkingV1().Ingresses("bench").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprintf("192.0.2.%d", (b.N-1)%250+1)
	for _, ing := range list.Items {
		if lb := ing.Status.LoadBalancer.Ingress; len(lb) != 1 || lb[0].IP != want {
			b.Fatalf("ingress %s has status %v, want %s", ing.Name, lb, want)
		}
	}
	if extra := w.Writes() - int64(n*b.N); extra != 0 {
		b.Errorf("%d writes more than one per ingress and iteration", extra)
	}
}

func createIngresses(b *testing.B, client kubernetes.Interface, ns, class string, n int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				ing := &networkingv1.Ingress{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ing-%05d", i), Namespace: ns},
					Spec: networkingv1.IngressSpec{IngressClassName: &class, DefaultBackend: &networkingv1.IngressBackend{
						Service: &networkingv1.IngressServiceBackend{Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}},
					}},
				}
				if _, err := client.NetworkingV1().Ingresses(ns).Create(context.Background(), ing, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

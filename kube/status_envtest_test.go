package kube

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// startAPIServer runs a real kube-apiserver and etcd for the test. It skips
// only under -short: missing binaries are a failure, so that a broken setup
// cannot pass for a green run.
func startAPIServer(t testing.TB, configure ...func(*envtest.Environment)) *rest.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd: skipped with -short")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join("..", ".tools", "kube")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			t.Fatalf("%s not found (%v): run `make tools` or set KUBEBUILDER_ASSETS, or use -short", bin, err)
		}
	}
	// envtest logs through controller-runtime's logger, which complains
	// loudly unless one is set.
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	for _, c := range configure {
		c(env)
	}
	framework.ReserveEnvtestPorts(t, env)
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping kube-apiserver: %v", err)
		}
	})
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000 // the tests' own requests must not queue behind client-go's default 5 QPS
	return cfg
}

// eventually polls check until it returns nil, and fails the test with the
// last error after timeout. Timeouts are generous: they bound a hang, they
// do not measure anything.
func eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const waitLong = 60 * time.Second

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runWriter runs a StatusWriter (informers and, when lead is true, the
// workers) until the test ends or stop is called.
func runWriter(t testing.TB, w *StatusWriter, lead bool) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("status writer: %v", err)
		}
	})
	if lead {
		wg.Go(func() { w.Lead(ctx) })
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

// gate is a Limiter that lets a write through only when the test releases a
// token, so that a test can tell exactly how many writes the writer made.
type gate struct {
	tokens  chan struct{}
	waiting atomic.Int64 // writers blocked for a token right now
	waits   atomic.Int64 // tokens asked for so far
}

func newGate() *gate { return &gate{tokens: make(chan struct{}, 100000)} }

func (g *gate) Wait(ctx context.Context) error {
	g.waits.Add(1)
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	select {
	case <-g.tokens:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gate) release(n int) {
	for range n {
		g.tokens <- struct{}{}
	}
}

// Fixtures.

func createNamespace(t testing.TB, client kubernetes.Interface, name string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}

func createIngressClass(t testing.TB, client kubernetes.Interface, name, controller string) {
	t.Helper()
	_, err := client.NetworkingV1().IngressClasses().Create(context.Background(), &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       networkingv1.IngressClassSpec{Controller: controller},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ingressclass %s: %v", name, err)
	}
}

// createIngress creates an Ingress of the given class ("" for none), with a
// label and an annotation that status writes must leave alone.
func createIngress(t *testing.T, client kubernetes.Interface, namespace, name, class string) *networkingv1.Ingress {
	t.Helper()
	ing := &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels:      map[string]string{"app": name},
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"kept":true}`},
		},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{
			Service: &networkingv1.IngressServiceBackend{Name: "backend", Port: networkingv1.ServiceBackendPort{Number: 80}},
		}},
	}
	if class != "" {
		ing.Spec.IngressClassName = &class
	}
	created, err := client.NetworkingV1().Ingresses(namespace).Create(context.Background(), ing, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating ingress %s/%s: %v", namespace, name, err)
	}
	return created
}

func getIngress(client kubernetes.Interface, namespace, name string) (*networkingv1.Ingress, error) {
	return client.NetworkingV1().Ingresses(namespace).Get(context.Background(), name, metav1.GetOptions{})
}

// statusIs reports whether an Ingress's status holds exactly want (IPs and
// hostnames, in order).
func statusIs(client kubernetes.Interface, namespace, name string, want ...string) error {
	ing, err := getIngress(client, namespace, name)
	if err != nil {
		return err
	}
	got := formatAddresses(ing.Status.LoadBalancer.Ingress)
	if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
		return fmt.Errorf("ingress %s/%s status is %v, want %v", namespace, name, got, want)
	}
	return nil
}

// setIngressStatus writes an Ingress's status as another controller would.
func setIngressStatus(t *testing.T, client kubernetes.Interface, namespace, name string, addresses ...string) {
	t.Helper()
	ing, err := getIngress(client, namespace, name)
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = nil
	for _, a := range addresses {
		ing.Status.LoadBalancer.Ingress = append(ing.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: a})
	}
	if _, err := client.NetworkingV1().Ingresses(namespace).UpdateStatus(context.Background(), ing, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting status of %s/%s: %v", namespace, name, err)
	}
}

// writesReach waits until w has made at least want writes, then checks it
// made exactly that many. A write shows in the API server a moment before
// the writer counts it, so the count is polled rather than read once.
func writesReach(t testing.TB, w *StatusWriter, want int64, who string) {
	t.Helper()
	eventually(t, waitLong, fmt.Sprintf("%s counts %d writes", who, want), func() error {
		if got := w.Writes(); got < want {
			return fmt.Errorf("%d writes", got)
		}
		return nil
	})
	if got := w.Writes(); got != want {
		t.Errorf("%s made %d writes, want %d", who, got, want)
	}
}

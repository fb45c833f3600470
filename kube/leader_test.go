package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// replica is one control plane, as far as status goes: a status writer that
// writes only while its leader election says so, over a connection to the
// API server that the test can cut.
type replica struct {
	name    string
	writer  *StatusWriter
	cut     atomic.Bool // when set, every request fails as if the network were down
	leading atomic.Bool
	terms   atomic.Int64
	stop    func()
}

type cuttable struct {
	rt  http.RoundTripper
	cut *atomic.Bool
}

func (c cuttable) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		return nil, errors.New("network cut by the test")
	}
	return c.rt.RoundTrip(r)
}

func startReplica(t *testing.T, cfg *rest.Config, name string, filter ClassFilter, addrs AddressSource) *replica {
	t.Helper()
	r := &replica{name: name}
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return cuttable{rt: rt, cut: &r.cut} }
	client := kubernetes.NewForConfigOrDie(cfg)
	logger := testLogger(t).With("replica", name)
	r.writer = NewStatusWriter(client, filter, addrs, nil, 2, logger)
	election := &LeaderElection{
		Client: client, Namespace: "kube-system", Name: "ingress-xds-test", Identity: name,
		// Short, so that the test is quick; the test never asserts on them.
		LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond,
		Logger: logger,
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := r.writer.Run(ctx); err != nil {
			t.Errorf("replica %s: status writer: %v", name, err)
		}
	})
	wg.Go(func() {
		err := election.Run(ctx, func(term context.Context) {
			r.terms.Add(1)
			r.leading.Store(true)
			defer r.leading.Store(false)
			r.writer.Lead(term)
		})
		if err != nil {
			t.Errorf("replica %s: leader election: %v", name, err)
		}
	})
	var once sync.Once
	r.stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(r.stop)
	return r
}

func leaseHolder(client kubernetes.Interface) (string, error) {
	lease, err := client.CoordinationV1().Leases("kube-system").Get(context.Background(), "ingress-xds-test", metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

func holderIs(client kubernetes.Interface, want string) error {
	got, err := leaseHolder(client)
	if err == nil && got != want {
		err = fmt.Errorf("lease held by %q, want %q", got, want)
	}
	return err
}

// TestLeaderFailover runs two replicas against the real API server: one
// leader writes status, the follower does not; when the leader is cut off
// from the API server the follower takes over once the lease expires, and
// when a leader shuts down cleanly it hands over at once.
func TestLeaderFailover(t *testing.T) {
	cfg := startAPIServer(t)
	client := kubernetes.NewForConfigOrDie(cfg)
	ns := "failover"
	createNamespace(t, client, ns)
	createIngressClass(t, client, "ha", "test.example/ha")
	filter := ClassFilter{ClassName: "ha", ControllerName: "test.example/ha"}
	addrs := func() AddressSource {
		a, err := NewStaticAddresses([]string{"192.0.2.20"})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	a := startReplica(t, cfg, "a", filter, addrs())
	eventually(t, waitLong, "a leads", func() error { return holderIs(client, "a") })
	b := startReplica(t, cfg, "b", filter, addrs())

	createIngress(t, client, ns, "one", "ha")
	eventually(t, waitLong, "the leader writes status", func() error {
		return statusIs(client, ns, "one", "192.0.2.20")
	})
	writesReach(t, a.writer, 1, "leader a")
	if b.writer.Writes() != 0 || b.leading.Load() {
		t.Fatalf("follower b made %d writes (leading: %v); want none", b.writer.Writes(), b.leading.Load())
	}

	// The leader loses the API server: it cannot renew, so it stops leading,
	// and b takes over when the lease runs out.
	cutAt := time.Now()
	a.cut.Store(true)
	eventually(t, waitLong, "b takes over from a that cannot reach the API server", func() error { return holderIs(client, "b") })
	t.Logf("failover after a lost the API server: %s (lease duration 3s)", time.Since(cutAt).Round(10*time.Millisecond))
	eventually(t, waitLong, "a stops leading", func() error {
		if a.leading.Load() {
			return fmt.Errorf("a still runs its term")
		}
		return nil
	})
	setIngressStatus(t, client, ns, "one", "198.51.100.1")
	createIngress(t, client, ns, "two", "ha")
	eventually(t, waitLong, "the new leader writes status", func() error {
		if err := statusIs(client, ns, "one", "192.0.2.20"); err != nil {
			return err
		}
		return statusIs(client, ns, "two", "192.0.2.20")
	})
	writesReach(t, b.writer, 2, "the new leader b")

	// a is back, and campaigns again as a follower.
	a.cut.Store(false)

	// b shuts down cleanly: it releases the lease and a takes over at once
	// (well within the lease duration, though the test does not time it).
	stoppedAt := time.Now()
	b.stop()
	eventually(t, waitLong, "a takes over from b that shut down", func() error { return holderIs(client, "a") })
	t.Logf("handover after b shut down: %s", time.Since(stoppedAt).Round(10*time.Millisecond))
	writesBefore := a.writer.Writes()
	createIngress(t, client, ns, "three", "ha")
	eventually(t, waitLong, "a writes status again", func() error {
		return statusIs(client, ns, "three", "192.0.2.20")
	})
	writesReach(t, a.writer, writesBefore+1, "a in its second term")
	if a.terms.Load() != 2 {
		t.Errorf("a led %d terms, want 2", a.terms.Load())
	}
}

package kind

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// traffic is a client that runs for the whole of a disruption, as a user's
// load balancer fed from the Ingress status would (external-dns, a cloud
// load balancer controller, a DNS round robin over status.loadBalancer): it
// sends to the addresses of the Ingress's status, on the Envoys' host port,
// in turn, one new connection per request, and never retries. Every answer
// that is not the expected one, every refused or reset connection, and every
// moment the status has no address, is a failed request.
//
// It follows the status through a watch of the Ingress, so it reacts to a
// change at once; a real load balancer that lags must lag less than the
// Envoys' drain window (deploy/envoy.yaml: a terminating Envoy keeps
// accepting for --drain-time-s, 15 s, after its address leaves the status).
type traffic struct {
	c      *cluster
	want   routeCase
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu       sync.Mutex
	addrs    []string       // the status's addresses, as last seen
	answered map[string]int // successful requests by node address
	failed   []string       // each failed request, with its node and error
}

// routeCase is the request the client sends and the answer it expects.
type routeCase = framework.RouteCase

// startTraffic starts sending want's request to the nodes in ingress's
// status; stop ends it.
func (c *cluster) startTraffic(t *testing.T, ingress string, want routeCase) *traffic {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tr := &traffic{c: c, want: want, cancel: cancel, answered: map[string]int{}}
	first, err := c.statusOf(ctx, ingress)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tr.addrs = first
	tr.done.Add(2)
	go func() { defer tr.done.Done(); tr.followStatus(ctx, ingress) }()
	go func() { defer tr.done.Done(); tr.send(ctx) }()
	t.Cleanup(tr.stop)
	return tr
}

// followStatus keeps addrs equal to the Ingress's status, from a watch
// (restarted whenever the API server ends it).
func (tr *traffic) followStatus(ctx context.Context, ingress string) {
	for ctx.Err() == nil {
		w, err := tr.c.watchIngress(ctx, ingress)
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			ing, ok := ev.Object.(*networkingv1.Ingress)
			if !ok { // an error: the watch ends, and is made again
				continue
			}
			tr.mu.Lock()
			tr.addrs = statusAddresses(ing)
			tr.mu.Unlock()
		}
		w.Stop()
	}
}

func (tr *traffic) send(ctx context.Context) {
	for i := 0; ctx.Err() == nil; i++ {
		tr.mu.Lock()
		addrs := slices.Clone(tr.addrs)
		tr.mu.Unlock()
		if len(addrs) == 0 {
			tr.fail(fmt.Sprintf("%s: the status has no address to send to", time.Now().Format(time.TimeOnly)))
		} else {
			node := addrs[i%len(addrs)]
			if err := tr.want.Send(net.JoinHostPort(node, tr.c.httpPort)); err != nil {
				tr.fail(fmt.Sprintf("%s: through %s: %v", time.Now().Format(time.TimeOnly), node, err))
			} else {
				tr.mu.Lock()
				tr.answered[node]++
				tr.mu.Unlock()
			}
		}
		// Enough requests to cross every step of a rollout, few enough
		// to leave the two cores to the cluster.
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (tr *traffic) fail(what string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.failed = append(tr.failed, what)
}

// answeredBy is how many requests went through node successfully so far.
func (tr *traffic) answeredBy(node string) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.answered[node]
}

// waitAnswered waits until node has answered n more requests than it had.
func (tr *traffic) waitAnswered(t *testing.T, node string, n int) {
	t.Helper()
	from := tr.answeredBy(node)
	framework.Eventually(t, converge, fmt.Sprintf("%d more requests answered through %s", n, node), func() error {
		if got := tr.answeredBy(node) - from; got < n {
			return fmt.Errorf("%d so far", got)
		}
		return nil
	})
}

func (tr *traffic) stop() {
	tr.cancel()
	tr.done.Wait()
}

// check stops the client and fails the test for each failed request,
// reporting the requests answered by each node.
func (tr *traffic) check(t *testing.T) {
	t.Helper()
	tr.stop()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var per []string
	total := 0
	for node, n := range tr.answered {
		per = append(per, fmt.Sprintf("%s: %d", node, n))
		total += n
	}
	slices.Sort(per)
	t.Logf("the client got %d right answers (%s) and %d failures", total, strings.Join(per, ", "), len(tr.failed))
	for i, f := range tr.failed {
		if i == 20 {
			t.Errorf("... and %d more failed requests", len(tr.failed)-i)
			break
		}
		t.Errorf("failed request: %s", f)
	}
}

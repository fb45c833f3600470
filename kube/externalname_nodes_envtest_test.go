package kube

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// In cluster mode an ExternalName must not resolve to a Node's address
// (the Envoys run on the Nodes): NodeAddresses follows the Nodes of a real
// API server, and a name pointing at one is refused, at once and after a
// Node gets that address. Each lookup after the first is made by stepping
// the source's fake clock to the name's expiry.
func TestResolvingSourceRefusesNodeAddresses(t *testing.T) {
	cfg := startAPIServer(t)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	node, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.50"}, {Type: corev1.NodeHostName, Address: "node-a"}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	d := framework.StartDNS(t, 1)
	d.Set("app.example.test", "192.0.2.50")
	nodes := &NodeAddresses{Client: client}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	src := &ResolvingSource{Source: &staticSource{state: externalNameState("app.example.test")}, Resolver: DNSResolver{Server: d.Address},
		Policy: AddressPolicy{Own: func() []netip.Addr { return nil }}, Nodes: nodes, MinInterval: 100 * time.Millisecond, Clock: clk}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = src.Run(runCtx, func() {}) }()
	eventually(t, waitLong, "node addresses known", func() error {
		if got := nodes.Addresses(); len(got) != 1 || got[0] != netip.MustParseAddr("192.0.2.50") {
			return fmt.Errorf("node addresses %v", got)
		}
		return nil
	})
	// lookupAgain steps the clock to the name's expiry and waits for the
	// lookup then due.
	lookupAgain := func() {
		t.Helper()
		next := func() time.Time {
			src.mu.Lock()
			defer src.mu.Unlock()
			if e := src.names["app.example.test"]; e != nil {
				return e.next
			}
			return time.Time{}
		}
		eventually(t, waitLong, "the first lookup", func() error {
			if next().IsZero() {
				return fmt.Errorf("not looked up yet")
			}
			return nil
		})
		due := next()
		eventually(t, waitLong, "looked up again", func() error {
			setClock(src, clk, due) // externalname_source_test.go
			if !next().After(due) {
				return fmt.Errorf("next lookup still at %s", next())
			}
			return nil
		})
	}
	refused := func(what string) {
		t.Helper()
		if r := src.State().Services[extSvc].Resolved; r == nil || !strings.Contains(r.Refused, "an address of this node") {
			t.Fatalf("%s: verdict %+v", what, r)
		}
	}
	lookupAgain() // the first may have come before the Nodes were known
	refused("a name resolving to a Node's address refused")

	d.Set("app.example.test", "192.0.2.51")
	lookupAgain()
	if r := src.State().Services[extSvc].Resolved; r == nil || *r != (Resolution{}) {
		t.Fatalf("another address served: verdict %+v", r)
	}
	// A Node that gets that address later: the next lookup refuses it.
	n2 := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}
	if n2, err = client.CoreV1().Nodes().Create(ctx, n2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	n2.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "192.0.2.51"}}
	if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitLong, "the new Node's address known", func() error {
		if got := nodes.Addresses(); len(got) != 2 {
			return fmt.Errorf("node addresses %v", got)
		}
		return nil
	})
	lookupAgain()
	refused("a name resolving to a new Node's address refused")
}

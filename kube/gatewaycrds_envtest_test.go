package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayCRDWatch runs the watch against a real API server: started
// with no Gateway API kind served, it ends when the CRDs are installed,
// naming the kinds served now; started with them all, it ends when one
// CRD is deleted, and not before.
func TestGatewayCRDWatch(t *testing.T) {
	cfg := startAPIServer(t)
	dyn := dynamic.NewForConfigOrDie(cfg)
	all := []string{"BackendTLSPolicy", "GRPCRoute", "Gateway", "GatewayClass", "HTTPRoute", "ReferenceGrant", "TLSRoute"}

	changed := runCRDWatch(t, &GatewayCRDWatch{Client: dyn, Logger: testLogger(t)})
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{framework.GatewayAPICRDs(t)}, ErrorIfPathMissing: true}); err != nil {
		t.Fatal(err)
	}
	// As serve does: start over with the kinds served now, until they
	// are all there (CRDs created one after the other may come apart).
	var starts []string
	for got := waitChanged(t, changed); ; got = waitChanged(t, changed) {
		starts = append(starts, fmt.Sprint(got.Now))
		if slices.Equal(got.Now, all) {
			break
		}
		if len(starts) > len(all) {
			t.Fatalf("started over %d times: %v", len(starts), starts)
		}
		changed = runCRDWatch(t, &GatewayCRDWatch{Client: dyn, Started: got.Now, Logger: testLogger(t)})
	}
	t.Logf("started over with %v", starts)

	changed = runCRDWatch(t, &GatewayCRDWatch{Client: dyn, Started: all, Logger: testLogger(t)})
	select {
	case err := <-changed:
		t.Fatalf("the watch ended with every kind served as at its start: %v", err)
	default:
	}
	crds := dyn.Resource(crdResource())
	if err := crds.Delete(context.Background(), "tlsroutes.gateway.networking.k8s.io", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := waitChanged(t, changed); !slices.Equal(got.Was, all) || slices.Contains(got.Now, "TLSRoute") || len(got.Now) != len(all)-1 {
		t.Errorf("after deleting TLSRoute's CRD: %v, want every kind but TLSRoute", got)
	}
}

// runCRDWatch runs w until the test ends; what Run returns comes on the
// channel.
func runCRDWatch(t *testing.T, w *GatewayCRDWatch) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := make(chan error, 1)
	go func() { out <- w.Run(ctx) }()
	return out
}

// waitChanged waits for the watch to end on a change (an event of the API
// server; the bound only ends a failing test).
func waitChanged(t *testing.T, ended <-chan error) *GatewayKindsChanged {
	t.Helper()
	select {
	case err := <-ended:
		var changed *GatewayKindsChanged
		if !errors.As(err, &changed) {
			t.Fatalf("the watch ended with %v, want a change of the kinds served", err)
		}
		return changed
	case <-time.After(time.Minute):
		t.Fatal("the watch did not end within a minute")
	}
	return nil
}

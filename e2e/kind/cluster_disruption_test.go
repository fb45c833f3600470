package kind

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The cluster's own disruptions: what an operator's cluster does to the
// Envoys and the control plane (a DaemonSet rollout, a node drained for
// maintenance, pods killed), each with the status-following client
// (traffic) sending throughout.

// testEnvoyRollingUpdate changes the Envoy DaemonSet's pod template, as
// `kubectl rollout restart daemonset/envoy` does (an annotation; a new
// image or argument rolls the same way): the DaemonSet replaces one node's
// Envoy at a time (deploy/envoy.yaml's maxUnavailable), each old one
// leaves the status and drains while the other nodes serve, and its
// replacement joins the status once Ready. No request fails.
func (c *cluster) testEnvoyRollingUpdate(t *testing.T) {
	ctx := t.Context()
	old, err := c.envoyPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, fmt.Sprintf("status %v before", before), func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, node := range before {
		tr.waitAnswered(t, node, 10)
	}

	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	if _, err := c.client.AppsV1().DaemonSets(systemNS).Patch(ctx, "envoy", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	took := framework.Eventually(t, rollout, fmt.Sprintf("every one of the %d Envoys replaced, the new ones Ready", len(old)), func() error {
		if err := c.envoysReady(ctx); err != nil {
			return err
		}
		now, err := c.envoyPods(ctx)
		if err != nil {
			return err
		}
		if len(now) != len(old) {
			return fmt.Errorf("%d Envoy pods, want %d", len(now), len(old))
		}
		for _, p := range now {
			if slices.ContainsFunc(old, func(o corev1.Pod) bool { return o.UID == p.UID }) {
				return fmt.Errorf("%s (on %s) is still there", p.Name, p.Spec.NodeName)
			}
			if err := isReady(&p); err != nil {
				return err
			}
		}
		return nil
	})
	framework.Eventually(t, converge, "status back to "+fmt.Sprint(before)+" with the new envoys", func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
	for _, node := range before {
		tr.waitAnswered(t, node, 10)
	}
	t.Logf("the DaemonSet rolled %d nodes in %s", len(old), took.Round(time.Second))
	tr.check(t)
}

package kind

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// teaRoute is what the disruption tests' client asks all along: the cafe's
// /tea, which testReroute leaves at tea.
var teaRoute = routeCase{Host: "cafe.example.com", Path: "/tea", Status: http.StatusOK, Backend: "tea"}

const controlPlaneLabel = "app.kubernetes.io/name=ingress-xds"

// lastEnvoy is the Ready Envoy on the last node by name: the one the
// disruption tests take away (kind's loopback mapping is the first worker's).
func (c *cluster) lastEnvoy(t *testing.T) corev1.Pod {
	t.Helper()
	pods, err := c.envoyPods(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := len(pods) - 1; i >= 0; i-- {
		if podReady(&pods[i]) {
			return pods[i]
		}
	}
	t.Fatalf("no Ready Envoy among %d pods", len(pods))
	return corev1.Pod{}
}

// replacement waits for the Envoy the DaemonSet makes on old's node after
// old is deleted, until ready says it is as wanted, and returns it.
func (c *cluster) replacement(t *testing.T, old corev1.Pod, what string, ready func(*corev1.Pod) error) corev1.Pod {
	t.Helper()
	var found corev1.Pod
	framework.Eventually(t, rollout, what, func() error {
		pods, err := c.envoyPods(t.Context())
		if err != nil {
			return err
		}
		for _, p := range pods {
			if p.Spec.NodeName == old.Spec.NodeName && p.UID != old.UID && p.DeletionTimestamp == nil {
				found = p
				return ready(&p)
			}
		}
		return fmt.Errorf("no new Envoy on %s yet", old.Spec.NodeName)
	})
	return found
}

func isReady(p *corev1.Pod) error {
	if !podReady(p) {
		return fmt.Errorf("%s is not Ready", p.Name)
	}
	return nil
}

// testEnvoyRestart deletes an Envoy pod while a client sends through every
// Envoy in the status (traffic): the terminating Envoy's address leaves
// the status at once while its preStop hook keeps it serving through the
// drain; the replacement's comes back once it is Ready. No request fails.
func (c *cluster) testEnvoyRestart(t *testing.T) {
	ctx := t.Context()
	before, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, fmt.Sprintf("status %v before", before), func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
	victim := c.lastEnvoy(t)
	node := victim.Status.HostIP
	tr := c.startTraffic(t, "cafe", teaRoute)
	tr.waitAnswered(t, node, 20)

	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	without := slices.DeleteFunc(slices.Clone(before), func(ip string) bool { return ip == node })
	framework.Eventually(t, converge, fmt.Sprintf("status without %s while its envoy terminates", node), func() error {
		return c.statusMatches(ctx, "cafe", without)
	})
	c.replacement(t, victim, "a Ready replacement of "+victim.Name, isReady)
	framework.Eventually(t, converge, "status back to "+fmt.Sprint(before)+" with the replacement envoy", func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
	tr.waitAnswered(t, node, 20)
	tr.check(t)
}

// testRollout restarts the control plane as `kubectl rollout restart`
// does, while the client runs: Envoys keep serving their configuration
// while their xDS streams move to the new replicas, the status is never
// emptied, and a change made afterwards reaches every Envoy.
func (c *cluster) testRollout(t *testing.T) {
	ctx := t.Context()
	before, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneLabel})
	if err != nil {
		t.Fatal(err)
	}
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, node := range envoys {
		tr.waitAnswered(t, node, 10)
	}

	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	if _, err := c.client.AppsV1().Deployments(systemNS).Patch(ctx, "ingress-xds", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, rollout, "the control plane rolled out, its old pods gone", func() error {
		if err := deploymentReady(ctx, c.client, systemNS, "ingress-xds"); err != nil {
			return err
		}
		now, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneLabel})
		if err != nil {
			return err
		}
		for _, p := range now.Items {
			for _, old := range before.Items {
				if p.UID == old.UID {
					return fmt.Errorf("%s is still there", p.Name)
				}
			}
		}
		return nil
	})
	c.expectNewIngressServed(t, "after-rollout")
	for _, node := range envoys {
		tr.waitAnswered(t, node, 10)
	}
	tr.check(t)
}

// expectNewIngressServed creates an Ingress for NAME.example.com and waits
// until every Envoy routes it and its status is the Envoys' nodes: the
// control plane serving now is watching, translating, serving xDS and
// writing status.
func (c *cluster) expectNewIngressServed(t *testing.T, name string) {
	t.Helper()
	c.expectNewIngressServedWithin(t, name, converge)
}

// expectNewIngressServedWithin is expectNewIngressServed with its own
// bound on each wait.
func (c *cluster) expectNewIngressServedWithin(t *testing.T, name string, within time.Duration) {
	t.Helper()
	ctx := t.Context()
	host := name + ".example.com"
	ing := cafeIngress(t, "coffee")
	ing.Name = name
	ing.Spec.Rules = []networkingv1.IngressRule{{Host: host, IngressRuleValue: ing.Spec.Rules[1].IngressRuleValue}}
	create(t, func() error {
		_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, ing, metav1.CreateOptions{})
		return err
	})
	for _, address := range c.envoyAddresses(t, false) {
		framework.Eventually(t, within, fmt.Sprintf("the new Ingress %s routed through %s", name, address), func() error {
			return framework.Expect(address, host, "/", http.StatusOK, "tea")
		})
	}
	want, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, within, fmt.Sprintf("the new Ingress %s has status %v", name, want), func() error {
		return c.statusMatches(ctx, name, want)
	})
}

// testFailover deletes the control plane replica that holds the Lease,
// while the client runs: the other takes over (the deleted one releases the
// Lease as it stops), Envoys keep their configuration and get new
// configuration from the surviving replica, and status is written by the
// new leader.
func (c *cluster) testFailover(t *testing.T) {
	ctx := t.Context()
	leader := func() (string, error) {
		lease, err := c.client.CoordinationV1().Leases(systemNS).Get(ctx, "ingress-xds-leader", metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return "", fmt.Errorf("nobody holds the lease")
		}
		pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
		return pod, nil
	}
	var old string
	framework.Eventually(t, converge, "a leader", func() (err error) {
		old, err = leader()
		return err
	})
	tr := c.startTraffic(t, "cafe", teaRoute)
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range envoys {
		tr.waitAnswered(t, node, 10)
	}
	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, converge, "another replica leads", func() error {
		now, err := leader()
		if err == nil && now == old {
			err = fmt.Errorf("%s still leads", old)
		}
		return err
	})
	c.expectNewIngressServed(t, "late")
	tr.check(t)
}

// scaleControlPlane sets the control plane's replicas and waits for them.
func (c *cluster) scaleControlPlane(t *testing.T, replicas int) {
	t.Helper()
	ctx := context.Background() // also from Cleanup, after the test's context ends
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := c.client.AppsV1().Deployments(systemNS).Patch(ctx, "ingress-xds", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, rollout, fmt.Sprintf("the control plane at %d replicas", replicas), func() error {
		pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneLabel})
		if err != nil {
			return err
		}
		if len(pods.Items) != replicas {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		return deploymentReady(ctx, c.client, systemNS, "ingress-xds")
	})
}

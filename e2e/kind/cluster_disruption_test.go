package kind

import (
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

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

// testNodeDrain cordons the last Envoy's node and evicts every pod on it
// but the DaemonSets' (the node's Envoy among them), through the eviction
// API, as `kubectl drain --ignore-daemonsets --delete-emptydir-data` does,
// retrying an eviction a PodDisruptionBudget refuses; then uncordons it.
// The backends have a budget of one unavailable pod each, as a user who
// drains nodes gives them. The evicted backends, control plane replicas and
// cluster add-ons come back on the other nodes; the node's Envoy serves
// throughout, and no request fails.
func (c *cluster) testNodeDrain(t *testing.T) {
	ctx := t.Context()
	for _, backend := range []string{"tea", "coffee"} {
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: backend, Namespace: appNS},
			Spec: policyv1.PodDisruptionBudgetSpec{
				MaxUnavailable: ptr.To(intstr.FromInt32(1)),
				Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": backend}},
			},
		}
		create(t, func() error {
			_, err := c.client.PolicyV1().PodDisruptionBudgets(appNS).Create(ctx, pdb, metav1.CreateOptions{})
			return err
		})
	}
	envoy := c.lastEnvoy(t)
	node := envoy.Spec.NodeName
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}

	cordon := func(on bool) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
		if _, err := c.client.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cordon(true)
	uncordoned := false
	t.Cleanup(func() {
		if !uncordoned { // the later subtests need the node
			patch := []byte(`{"spec":{"unschedulable":false}}`)
			c.client.CoreV1().Nodes().Patch(c.ctx(), node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		}
	})

	pods, err := c.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		t.Fatal(err)
	}
	var evicted []corev1.Pod
	for _, p := range pods.Items {
		if daemon(&p) || p.Annotations[corev1.MirrorPodAnnotationKey] != "" || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		evicted = append(evicted, p)
	}
	var names []string
	for _, p := range evicted {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	t.Logf("draining %s: evicting %d pods: %v", node, len(evicted), names)
	for _, p := range evicted {
		framework.Eventually(t, rollout, "evicted "+p.Namespace+"/"+p.Name, func() error {
			err := c.client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err // 429 while a budget forbids it: kubectl drain retries too
		})
	}
	framework.Eventually(t, rollout, "every evicted pod gone from "+node, func() error {
		for _, p := range evicted {
			got, err := c.client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err == nil && got.UID == p.UID {
				return fmt.Errorf("%s/%s is still there", p.Namespace, p.Name)
			}
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	})
	framework.Eventually(t, rollout, "the backends and the control plane back at full strength on the other nodes", func() error {
		for _, d := range []struct{ ns, name, selector string }{{appNS, "tea", "app=tea"}, {appNS, "coffee", "app=coffee"}, {systemNS, "ingress-xds", controlPlaneLabel}} {
			if err := c.replacedAndReady(d.ns, d.name, d.selector, evicted, node); err != nil {
				return err
			}
		}
		return nil
	})
	// The node's Envoy, a DaemonSet pod, stayed and serves on.
	tr.waitAnswered(t, envoy.Status.HostIP, 20)
	cordon(false)
	uncordoned = true
	framework.Eventually(t, converge, fmt.Sprintf("status still %v", envoys), func() error {
		return c.statusMatches(ctx, "cafe", envoys)
	})
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}
	c.expectNewIngressServed(t, "after-drain")
	tr.check(t)
}

// replacedAndReady is nil once Deployment ns/name has as many Ready pods
// (those of selector, not terminating) as it wants, none of them one of
// gone nor on node notOn (when set), and says it is rolled out: checked on
// the pods themselves, as the Deployment's status lags a deletion.
func (c *cluster) replacedAndReady(ns, name, selector string, gone []corev1.Pod, notOn string) error {
	ctx := c.ctx()
	d, err := c.client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	want := 1
	if d.Spec.Replicas != nil {
		want = int(*d.Spec.Replicas)
	}
	pods, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return err
	}
	ready := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		if slices.ContainsFunc(gone, func(o corev1.Pod) bool { return o.UID == p.UID }) {
			return fmt.Errorf("%s/%s is still there", ns, p.Name)
		}
		if notOn != "" && p.Spec.NodeName == notOn {
			return fmt.Errorf("%s/%s was scheduled to %s", ns, p.Name, notOn)
		}
		if podReady(&p) {
			ready++
		}
	}
	if ready != want {
		return fmt.Errorf("%s/%s: %d of %d pods Ready", ns, name, ready, want)
	}
	return deploymentReady(ctx, c.client, ns, name)
}

// daemon says whether a DaemonSet owns p: kubectl drain leaves those.
func daemon(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}

// testControlPlaneKilled deletes every control plane pod with no grace
// period (what a node's loss or an OOM kill looks like: no clean stream
// end, no Lease released) three times, while Ingresses are created and
// edited: one created just before each kill, edited just after it, before
// the new replicas are up. Envoys keep serving their configuration
// meanwhile, no request fails, and every change ends up routed by every
// Envoy and in the status.
func (c *cluster) testControlPlaneKilled(t *testing.T) {
	ctx := t.Context()
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}
	const rounds = 3
	var made []string
	for round := 1; round <= rounds; round++ {
		before, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneLabel})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("killed-%d", round)
		ing := cafeIngress(t, "coffee")
		ing.Name = name
		ing.Spec.Rules = []networkingv1.IngressRule{{Host: name + ".example.com", IngressRuleValue: ing.Spec.Rules[1].IngressRuleValue}}
		create(t, func() error {
			_, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, ing, metav1.CreateOptions{})
			return err
		})
		made = append(made, name)
		for _, p := range before.Items {
			if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
		}
		// While no replica runs: the Ingress now goes to coffee.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			got, err := c.client.NetworkingV1().Ingresses(appNS).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			got.Spec.Rules[0].HTTP.Paths[0].Backend.Service = &networkingv1.IngressServiceBackend{Name: "coffee", Port: networkingv1.ServiceBackendPort{Number: 80}}
			_, err = c.client.NetworkingV1().Ingresses(appNS).Update(ctx, got, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, rollout, fmt.Sprintf("kill %d of %d: %d control plane pods replaced, the new ones Ready", round, rounds, len(before.Items)), func() error {
			return c.replacedAndReady(systemNS, "ingress-xds", controlPlaneLabel, before.Items, "")
		})
	}
	for _, name := range made {
		host := name + ".example.com"
		for _, address := range c.envoyAddresses(t, false) {
			framework.Eventually(t, converge, fmt.Sprintf("%s, edited while no control plane ran, routed to coffee through %s", name, address), func() error {
				return framework.Expect(address, host, "/", http.StatusOK, "coffee")
			})
		}
		framework.Eventually(t, converge, fmt.Sprintf("%s has status %v", name, envoys), func() error {
			return c.statusMatches(ctx, name, envoys)
		})
	}
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}
	tr.check(t)
}

// apiServerManifest is kubeadm's static pod manifest of the API server on
// a control-plane node, and apiServerAway where the test moves it to stop
// that API server (outside the directory the kubelet watches).
const (
	apiServerManifest = "/etc/kubernetes/manifests/kube-apiserver.yaml"
	apiServerAway     = "/etc/kubernetes/kube-apiserver.yaml.away"
)

// testAPIServerRestart stops the cluster's only API server and starts it
// again, as an upgrade or a crash of the control-plane node's static pod
// does: the manifest is moved out of the kubelet's static pod directory on
// the kind node (docker exec) until the API server stops answering, then
// back. Meanwhile the control plane cannot watch or write status, and the
// Envoys serve the configuration they have: no request fails (the client
// keeps the last status it saw). Once it is back, a new Ingress is routed
// by every Envoy and gets its status. It needs the node to be a container
// of this machine's Docker engine (kind): otherwise it skips.
func (c *cluster) testAPIServerRestart(t *testing.T) {
	ctx := t.Context()
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 {
		t.Skipf("%d control-plane nodes: the test stops the one API server of a kind cluster", len(nodes.Items))
	}
	node := nodes.Items[0].Name
	if out, err := exec.CommandContext(ctx, "docker", "exec", node, "test", "-f", apiServerManifest).CombinedOutput(); err != nil {
		t.Skipf("the control-plane node %s is not a container here with %s (%v: %s)", node, apiServerManifest, err, out)
	}
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}

	move := func(from, to string) error {
		out, err := exec.Command("docker", "exec", node, "mv", from, to).CombinedOutput()
		if err != nil {
			return fmt.Errorf("docker exec %s mv %s %s: %v: %s", node, from, to, err, out)
		}
		return nil
	}
	if err := move(apiServerManifest, apiServerAway); err != nil {
		t.Fatal(err)
	}
	away := true
	t.Cleanup(func() { // the later subtests need the API server
		if away {
			if err := move(apiServerAway, apiServerManifest); err != nil {
				t.Error(err)
			}
		}
	})
	// Asked on a client of its own with a timeout: a request on a
	// connection the stopping API server leaves open must not hang.
	probeCfg := rest.CopyConfig(c.cfg)
	probeCfg.Timeout = 5 * time.Second
	probe := kubernetes.NewForConfigOrDie(probeCfg)
	down := framework.Eventually(t, rollout, "the API server stopped", func() error {
		if _, err := probe.Discovery().ServerVersion(); err == nil {
			return fmt.Errorf("it still answers")
		}
		return nil
	})
	// A moment of outage with traffic, then the API server back.
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 20)
	}
	if err := move(apiServerAway, apiServerManifest); err != nil {
		t.Fatal(err)
	}
	away = false
	up := framework.Eventually(t, rollout, "the API server answering again", func() error {
		_, err := probe.Discovery().ServerVersion()
		return err
	})
	t.Logf("the API server stopped %s after its manifest was moved, and answered again %s after it was back", down.Round(time.Second), up.Round(time.Second))
	// The control plane's informers reconnect after client-go's backoff,
	// which grows with the outage: a generous bound for the first change.
	c.expectNewIngressServedWithin(t, "after-apiserver", rollout)
	for _, ip := range envoys {
		tr.waitAnswered(t, ip, 10)
	}
	tr.check(t)
}

package kind

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// testReadiness starts an Envoy that cannot get its configuration (the
// control plane scaled to zero, then one Envoy pod deleted): the kubelet's
// runs of deploy/envoy.yaml's readiness probe fail, so the pod stays
// unready and out of the ready endpoints of a Service in front of the Envoys
// (as a user's LoadBalancer or NodePort Service would be), while the other
// Envoy keeps serving its configuration. Once the control plane is back,
// the new Envoy gets its configuration, turns Ready, joins the Service and
// the Ingress status, and serves. deploy/envoy_probes_test.go runs the same
// probe against a local Envoy.
func (c *cluster) testReadiness(t *testing.T) {
	ctx := t.Context()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "envoy-readiness", Namespace: systemNS},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/name": "envoy"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	}
	create(t, func() error {
		_, err := c.client.CoreV1().Services(systemNS).Create(ctx, svc, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		c.client.CoreV1().Services(systemNS).Delete(t.Context(), svc.Name, metav1.DeleteOptions{})
	})
	victim := c.lastEnvoy(t)
	before, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := slices.DeleteFunc(slices.Clone(before), func(ip string) bool { return ip == victim.Status.HostIP })
	if len(other) == 0 {
		t.Fatalf("no Envoy besides %s's", victim.Spec.NodeName)
	}
	framework.Eventually(t, converge, fmt.Sprintf("the Service's ready endpoints are %v", before), func() error {
		return c.serviceReadyEndpoints(svc.Name, before)
	})

	c.scaleControlPlane(t, 0)
	restored := false
	t.Cleanup(func() {
		if !restored {
			c.scaleControlPlane(t, 2)
		}
	})
	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Fifteen failures, three seconds apart: longer than Envoy's default
	// initial fetch timeouts (15 s for clusters, then 15 s for listeners),
	// after which an Envoy would turn ready with no listener if its
	// bootstrap allowed it (it did, until this test ran on a cluster).
	fresh := c.replacement(t, victim, "a replacement of "+victim.Name+" whose readiness probe failed 15 times", func(p *corev1.Pod) error {
		return c.probeFailed(p, 15)
	})
	if podReady(&fresh) {
		t.Fatalf("%s is Ready without a control plane", fresh.Name)
	}
	if err := c.serviceReadyEndpoints(svc.Name, other); err != nil {
		t.Errorf("while %s has no configuration: %v", fresh.Name, err)
	}
	// It has no listener: the host port refuses connections.
	if conn, err := net.DialTimeout("tcp", net.JoinHostPort(victim.Status.HostIP, c.httpPort), 2*time.Second); err == nil {
		conn.Close()
		t.Errorf("%s accepts connections on its node's port %s without configuration", fresh.Name, c.httpPort)
	}
	for _, node := range other {
		if err := teaRoute.Send(net.JoinHostPort(node, c.httpPort)); err != nil {
			t.Errorf("the Envoy on %s with no control plane: %v", node, err)
		}
	}

	restored = true
	c.scaleControlPlane(t, 2)
	c.replacement(t, victim, fresh.Name+" Ready once the control plane is back", isReady)
	framework.Eventually(t, converge, fmt.Sprintf("the Service's ready endpoints back to %v", before), func() error {
		return c.serviceReadyEndpoints(svc.Name, before)
	})
	framework.Eventually(t, converge, fmt.Sprintf("status back to %v", before), func() error {
		return c.statusMatches(ctx, "cafe", before)
	})
	if err := teaRoute.Send(net.JoinHostPort(victim.Status.HostIP, c.httpPort)); err != nil {
		t.Errorf("%s once Ready: %v", fresh.Name, err)
	}
}

// probeFailed is nil once the kubelet has reported n failed readiness
// probes of p (Unhealthy Events, with their counts): the probe ran, and
// said no, n times.
func (c *cluster) probeFailed(p *corev1.Pod, n int32) error {
	events, err := c.client.CoreV1().Events(systemNS).List(c.ctx(), metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.name": p.Name, "involvedObject.uid": string(p.UID), "reason": "Unhealthy"}.String(),
	})
	if err != nil {
		return err
	}
	var failures int32
	for _, e := range events.Items {
		failures += max(e.Count, 1)
	}
	if failures < n {
		return fmt.Errorf("%d failed readiness probes of %s reported so far", failures, p.Name)
	}
	return nil
}

// serviceReadyEndpoints is nil when the Service's EndpointSlices have ready
// endpoints on exactly the nodes want (host IPs: an Envoy's pod IP is not
// its node's, so the nodes are looked up by the endpoints' nodeName).
func (c *cluster) serviceReadyEndpoints(service string, want []string) error {
	ctx := c.ctx()
	epSlices, err := c.client.DiscoveryV1().EndpointSlices(systemNS).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service})
	if err != nil {
		return err
	}
	var got []string
	for _, s := range epSlices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || e.NodeName == nil {
				continue
			}
			node, err := c.client.CoreV1().Nodes().Get(ctx, *e.NodeName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, a := range node.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					got = append(got, a.Address)
				}
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("service %s has ready endpoints on %v, want %v", service, got, want)
	}
	return nil
}

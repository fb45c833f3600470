package kind

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// envoyPods lists the Envoy pods, sorted by node name.
func (c *cluster) envoyPods(ctx context.Context) ([]corev1.Pod, error) {
	pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: envoyLabel})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Spec.NodeName, b.Spec.NodeName) })
	return pods.Items, nil
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyEnvoyHostIPs is what the status should be, worked out independently
// of the control plane: the host IPs of Ready, not terminating Envoy pods
// (kind nodes have no ExternalIP).
func (c *cluster) readyEnvoyHostIPs(ctx context.Context) ([]string, error) {
	pods, err := c.envoyPods(ctx)
	if err != nil {
		return nil, err
	}
	var ips []string
	for i := range pods {
		if podReady(&pods[i]) && pods[i].Status.HostIP != "" {
			ips = append(ips, pods[i].Status.HostIP)
		}
	}
	slices.Sort(ips)
	return slices.Compact(ips), nil
}

// statusAddresses is an Ingress's status.loadBalancer, sorted.
func statusAddresses(ing *networkingv1.Ingress) []string {
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		out = append(out, lb.IP+lb.Hostname)
	}
	slices.Sort(out)
	return out
}

func (c *cluster) statusOf(ctx context.Context, name string) ([]string, error) {
	ing, err := c.client.NetworkingV1().Ingresses(appNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return statusAddresses(ing), nil
}

// watchIngress watches one Ingress of the cafe namespace, starting with its
// current state.
func (c *cluster) watchIngress(ctx context.Context, name string) (watch.Interface, error) {
	return c.client.NetworkingV1().Ingresses(appNS).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
}

func (c *cluster) statusMatches(ctx context.Context, name string, want []string) error {
	got, err := c.statusOf(ctx, name)
	if err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("ingress %s status %v, want %v", name, got, want)
	}
	return nil
}

// testStatus: the cafe's status is the addresses of the nodes that run a
// Ready Envoy, one per worker, and the nodes' own InternalIPs.
func (c *cluster) testStatus(t *testing.T) {
	ctx := t.Context()
	want, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 2 {
		t.Fatalf("envoys ready on %v: want one on each of two workers at least", want)
	}
	pods, err := c.envoyPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var internal []string
	for _, p := range pods {
		node, err := c.client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				internal = append(internal, a.Address)
			}
		}
	}
	slices.Sort(internal)
	if !slices.Equal(internal, want) {
		t.Fatalf("the Envoys' nodes have InternalIPs %v, their pods host IPs %v", internal, want)
	}
	framework.Eventually(t, converge, fmt.Sprintf("cafe status %v", want), func() error {
		return c.statusMatches(ctx, "cafe", want)
	})
}

// testReroute edits the cafe as the local suite edits its file
// (framework.CafeRerouted), through every Envoy.
func (c *cluster) testReroute(t *testing.T) {
	ctx := t.Context()
	ing, err := c.client.NetworkingV1().Ingresses(appNS).Get(ctx, "cafe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Spec = cafeIngress(t, "tea").Spec
	if _, err := c.client.NetworkingV1().Ingresses(appNS).Update(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, address := range c.envoyAddresses(t, false) {
		for _, rc := range framework.CafeRerouted() {
			framework.Eventually(t, converge, fmt.Sprintf("GET %s%s through %s after the edit", rc.Host, rc.Path, address), func() error {
				return rc.Send(address)
			})
		}
	}
}

// testBadIngressAmongGood creates, through the cluster's API server as a
// user's kubectl apply would, an Ingress whose access control cannot be
// applied (a source range that is not a CIDR) between two good ones: the
// good ones are served by every Envoy, the bad one's paths answer 503
// (refused, never served open), it gets a Warning Event, and the cafe is
// untouched (docs/bad-input.md).
func (c *cluster) testBadIngressAmongGood(t *testing.T) {
	ctx := t.Context()
	newIngress := func(name string, annotations map[string]string) *networkingv1.Ingress {
		ing := cafeIngress(t, "tea")
		ing.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: appNS, Annotations: annotations}
		ing.Spec.TLS = nil
		for i := range ing.Spec.Rules {
			ing.Spec.Rules[i].Host = name + ".example.com"
		}
		return ing
	}
	ingresses := []*networkingv1.Ingress{
		newIngress("good-a", nil),
		newIngress("bad", map[string]string{"nginx.ingress.kubernetes.io/whitelist-source-range": "not-a-cidr"}),
		newIngress("good-b", nil),
	}
	for _, ing := range ingresses {
		if _, err := c.client.NetworkingV1().Ingresses(appNS).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.client.NetworkingV1().Ingresses(appNS).Delete(context.Background(), ing.Name, metav1.DeleteOptions{})
		})
	}
	path := ingresses[0].Spec.Rules[0].HTTP.Paths[0].Path
	for _, address := range c.envoyAddresses(t, false) {
		for _, host := range []string{"good-a.example.com", "good-b.example.com"} {
			framework.Eventually(t, converge, fmt.Sprintf("GET %s%s through %s", host, path, address), func() error {
				r, err := framework.Get(address, host, path)
				if err != nil {
					return err
				}
				if r.Status != http.StatusOK || r.Backend == "" {
					return fmt.Errorf("%s", r)
				}
				return nil
			})
		}
		framework.Eventually(t, converge, "the bad Ingress refused through "+address, func() error {
			r, err := framework.Get(address, "bad.example.com", path)
			if err != nil {
				return err
			}
			if r.Status != http.StatusServiceUnavailable || r.Backend != "" {
				return fmt.Errorf("bad.example.com: %s, want 503 from Envoy", r)
			}
			return nil
		})
		if err := teaRoute.Send(address); err != nil {
			t.Errorf("the cafe through %s: %v", address, err)
		}
	}
	framework.Eventually(t, converge, "a Warning Event on the bad Ingress", func() error {
		events, err := c.client.CoreV1().Events(appNS).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=bad"})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "whitelist-source-range") {
				return nil
			}
		}
		return fmt.Errorf("%d events, none a Warning naming whitelist-source-range", len(events.Items))
	})
}

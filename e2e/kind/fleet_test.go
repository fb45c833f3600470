package kind

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// testFleetShared: every replica of the control plane serves xDS, and the
// Envoys of the DaemonSet, which reach them through one Service, are
// shared between them (issue 31: several replicas share the fleet). Each
// replica's ingress_xds_connected_envoys says how many it serves, and
// together they serve every Envoy. The replica serving the most is then
// deleted while a client sends requests through every Envoy: its Envoys
// move to the replicas left (and the one that replaces it) without a
// failed request, and a change made afterwards reaches every Envoy.
func (c *cluster) testFleetShared(t *testing.T) {
	ctx := t.Context()
	envoys, err := c.readyEnvoyHostIPs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var before map[string]int
	// Both replicas running first: the test before this one may have
	// deleted one, whose replacement is still starting.
	framework.Eventually(t, converge, fmt.Sprintf("the control plane's 2 replicas serve the %d Envoys between them", len(envoys)), func() (err error) {
		before, err = c.connectedEnvoys(ctx)
		switch {
		case err != nil:
		case len(before) < 2:
			err = fmt.Errorf("%d control plane replicas running, want 2 (deploy/control-plane.yaml)", len(before))
		case sum(before) != len(envoys):
			err = fmt.Errorf("%v: %d streams, want %d", before, sum(before), len(envoys))
		}
		return err
	})
	busiest := ""
	for pod, n := range before {
		if busiest == "" || n > before[busiest] || n == before[busiest] && pod < busiest {
			busiest = pod
		}
	}
	t.Logf("Envoys per replica: %v; deleting %s", before, busiest)

	tr := c.startTraffic(t, "cafe", teaRoute)
	for _, node := range envoys {
		tr.waitAnswered(t, node, 10)
	}
	if err := c.client.CoreV1().Pods(systemNS).Delete(ctx, busiest, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var after map[string]int
	framework.Eventually(t, rollout, fmt.Sprintf("%s's Envoys served by the other replicas", busiest), func() (err error) {
		after, err = c.connectedEnvoys(ctx)
		switch {
		case err != nil:
		case after[busiest] != 0:
			err = fmt.Errorf("%s still serves %d", busiest, after[busiest])
		case sum(after) != len(envoys):
			err = fmt.Errorf("%v: %d streams, want %d", after, sum(after), len(envoys))
		}
		return err
	})
	t.Logf("Envoys per replica after: %v", after)
	c.expectNewIngressServed(t, "fleet")
	for _, node := range envoys {
		tr.waitAnswered(t, node, 10)
	}
	tr.check(t)
}

// connectedEnvoys reads each running control plane pod's
// ingress_xds_connected_envoys (every protocol) through the API server's
// proxy to its metrics port.
func (c *cluster) connectedEnvoys(ctx context.Context) (map[string]int, error) {
	pods, err := c.client.CoreV1().Pods(systemNS).List(ctx, metav1.ListOptions{LabelSelector: controlPlaneLabel})
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		body, err := c.client.CoreV1().Pods(systemNS).ProxyGet("http", p.Name, "8000", "/metrics", nil).DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s's metrics: %w", p.Name, err)
		}
		n, err := gaugeSum(body, "ingress_xds_connected_envoys")
		if err != nil {
			return nil, fmt.Errorf("%s's metrics: %w", p.Name, err)
		}
		out[p.Name] = n
	}
	return out, nil
}

// gaugeSum adds the samples of a metric of Prometheus's text format.
func gaugeSum(body []byte, name string) (int, error) {
	total, found := 0.0, false
	s := bufio.NewScanner(bytes.NewReader(body))
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		total, found = total+v, true
	}
	if !found {
		return 0, fmt.Errorf("no %s", name)
	}
	return int(total), s.Err()
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

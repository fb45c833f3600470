package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestPolicyClusterWarms changes an Ingress's proxy-connect-timeout while a
// real Envoy (SotW, then delta) serves it: each change makes a new cluster
// of the same Service, which reads the Service's one load assignment, that
// Envoy already holds for the cluster before. Envoy asks for nothing then,
// and without the control plane sending it that load assignment again
// (xds/sharededs.go) the new cluster would warm only at its initial fetch
// timeout, 15 s later, its routes answering 503 meanwhile. Each new cluster
// must be active within a third of that. It mirrors ingress-nginx's
// test/e2e/annotations/proxy.go (proxy-connect-timeout applied to a
// running controller).
func TestPolicyClusterWarms(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: "SotW", true: "delta"}[delta], func(t *testing.T) {
			b := echoBackends(t, "coffee", "tea")
			dir := t.TempDir()
			writeManifest(t, dir, "services.yaml", servicesYAML(b[0], b[1]))
			writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "coffee"))
			cp := framework.StartControlPlane(t, "--manifests", dir)
			cp.WaitReady(t)
			envoy := framework.StartEnvoyWith(t, cp, framework.EnvoyOptions{SotW: !delta, Delta: delta})
			t.Cleanup(func() { assertNothingRejected(t, envoy) })
			framework.Eventually(t, convergeTimeout, "the cafe served", func() error {
				return envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
			})
			for _, timeout := range []int{3, 4, 5} {
				writeManifest(t, dir, "patient.yaml", patientIngressYAML(timeout))
				if delta {
					// Envoy holds a cluster only once a request asks for
					// it, and that request waits for it to warm: the
					// first one is served (TestOnDemandClusters).
					framework.Eventually(t, convergeTimeout, "the patient host served by its new cluster", func() error {
						if err := envoy.Expect("patient.example.com", "/", http.StatusOK, "coffee"); err != nil {
							return err // 404 until the first route comes
						}
						if policyClusterWith(envoy.ConfigDump(), timeout) == "" {
							return fmt.Errorf("no cluster of default/coffee/80 with a %d s connect timeout yet", timeout)
						}
						return nil
					})
					continue
				}
				// The cluster's name, from the control plane's own view.
				var name string
				framework.Eventually(t, convergeTimeout, "the new cluster in Envoy's configuration", func() error {
					name = policyClusterWith(envoy.ConfigDump(), timeout)
					if name == "" {
						return fmt.Errorf("no cluster of default/coffee/80 with a %d s connect timeout yet", timeout)
					}
					return nil
				})
				// Active (warmed) well before the 15 s initial fetch timeout.
				framework.Eventually(t, 5*time.Second, "cluster "+name+" warmed", func() error {
					if !slices.Contains(activeClusters(t, envoy), name) {
						return fmt.Errorf("%s is still warming", name)
					}
					return nil
				})
				// Its routes may come a moment after it (SotW sends the
				// route configuration on its own stream); the bound is
				// still well under the 15 s a cold cluster waited.
				framework.Eventually(t, 5*time.Second, "the patient host served by its new cluster", func() error {
					return envoy.Expect("patient.example.com", "/", http.StatusOK, "coffee")
				})
			}
		})
	}
}

// policyClusterWith finds, in a config dump, the name of the cluster of
// default/coffee/80 whose connect timeout is the given seconds.
func policyClusterWith(dump string, seconds int) string {
	want := fmt.Sprintf(`"connect_timeout": "%ds"`, seconds)
	for _, part := range strings.Split(dump, `"name": "default/coffee/80/`)[1:] {
		end := strings.IndexByte(part, '"')
		if end < 0 {
			continue
		}
		body := part
		if next := strings.Index(part, `"name": "`); next > 0 {
			body = part[:next]
		}
		if strings.Contains(body, want) {
			return "default/coffee/80/" + part[:end]
		}
	}
	return ""
}

// activeClusters are the clusters Envoy routes to (/clusters lists no
// warming cluster).
func activeClusters(t *testing.T, envoy *framework.Envoy) []string {
	t.Helper()
	status, body, err := envoy.Admin("/clusters")
	if err != nil || status != http.StatusOK {
		t.Fatalf("envoy /clusters: %d %v", status, err)
	}
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if name, rest, ok := strings.Cut(line, "::"); ok && strings.HasPrefix(rest, "added_via_api::") {
			out = append(out, name)
		}
	}
	return out
}

// patientIngressYAML is an Ingress of patient.example.com to the cafe's
// coffee Service with proxy-connect-timeout at the given seconds: a policy
// cluster of default/coffee/80, which reads that Service's one load
// assignment.
func patientIngressYAML(seconds int) string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: patient
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-connect-timeout: "%d"}
spec:
  ingressClassName: ingress-xds
  rules:
  - host: patient.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}
`, seconds)
}

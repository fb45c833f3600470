package e2e

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestOnDemandClusters runs `serve --on-demand-clusters --manifests DIR`
// with a real Envoy on delta xDS (issue 18): Envoy starts holding none of
// the Ingresses' clusters, fetches a route's cluster when a request first
// needs it, and that first request is served (not 503), as are the cafe's
// routes; it then holds the clusters its requests used, and no other. A
// new host and a path switched to another Service are served on their
// first request too, and a Service that goes takes its cluster out of
// Envoy. It mirrors ingress-nginx's test/e2e/lua/dynamic_configuration.go
// (backends change on the running proxy, without a reload: through
// ingress-nginx they are balanced in Lua from a list the controller posts);
// the rest of the suite runs with on-demand clusters too (serve's and
// bootstrap's defaults), and with every cluster sent under
// INGRESS_XDS_E2E_SOTW=1.
func TestOnDemandClusters(t *testing.T) {
	b := echoBackends(t, "coffee", "tea")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", servicesYAML(b[0], b[1]))
	writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "coffee"))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--on-demand-clusters")
	cp.WaitReady(t)
	envoy := framework.StartEnvoyWith(t, cp, framework.EnvoyOptions{Delta: true})
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "the routes", func() error {
		if routeUpdates(t, envoy) == 0 {
			return errors.New("no route update yet")
		}
		return nil
	})
	if held := backendClusters(t, envoy); len(held) != 0 {
		t.Fatalf("before any request Envoy holds %v: the clusters came ahead", held)
	}

	// The first request to a cluster Envoy does not hold is served.
	start := time.Now()
	if err := envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee"); err != nil {
		t.Fatalf("the first request, whose cluster comes on demand: %v", err)
	}
	t.Logf("first request, its cluster fetched on demand: %v", time.Since(start))
	if held := backendClusters(t, envoy); !slices.Equal(held, []string{"default/coffee/80"}) {
		t.Fatalf("after a request to coffee Envoy holds %v, want default/coffee/80 alone", held)
	}
	expectAll(t, envoy, framework.CafeRoutes())

	// A second cluster of a backend Envoy holds (a policy cluster, here
	// proxy-connect-timeout's, reads the backend's one load assignment):
	// served on its first request, though Envoy, already subscribed to
	// that load assignment, asks for nothing (xds/sharededs.go).
	before := routeUpdates(t, envoy)
	writeManifest(t, dir, "patient.yaml", patientIngressYAML(3))
	framework.Eventually(t, convergeTimeout, "the patient host's route", func() error {
		if routeUpdates(t, envoy) == before {
			return errors.New("no route update yet")
		}
		return nil
	})
	if err := envoy.Expect("patient.example.com", "/", http.StatusOK, "coffee"); err != nil {
		t.Fatalf("the first request to a second cluster of a backend Envoy holds: %v", err)
	}
	if held := backendClusters(t, envoy); !slices.ContainsFunc(held, func(name string) bool { return strings.HasPrefix(name, "default/coffee/80/") }) {
		t.Fatalf("Envoy holds %v, no policy cluster of default/coffee/80", held)
	}

	// A new host, to a Service no request has used: served on its first try.
	before = routeUpdates(t, envoy)
	writeManifest(t, dir, "menu.yaml", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: menu, namespace: default}
spec:
  ingressClassName: ingress-xds
  rules:
  - host: menu.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: tea-2, port: {number: 80}}}}
---
apiVersion: v1
kind: Service
metadata: {name: tea-2, namespace: default}
spec:
  ports: [{port: 80, targetPort: `+strconv.Itoa(b[1].Port)+`}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: tea-2-1, namespace: default, labels: {kubernetes.io/service-name: tea-2}}
addressType: IPv4
ports: [{port: `+strconv.Itoa(b[1].Port)+`}]
endpoints: [{addresses: ["`+b[1].Host+`"]}]
`)
	framework.Eventually(t, convergeTimeout, "the new host's route", func() error {
		if routeUpdates(t, envoy) == before {
			return errors.New("no route update yet")
		}
		return nil
	})
	if err := envoy.Expect("menu.example.com", "/today", http.StatusOK, "tea"); err != nil {
		t.Fatalf("the first request to a new host: %v", err)
	}

	// The Service goes: Envoy, which fetched its cluster, is told.
	before = routeUpdates(t, envoy)
	writeManifest(t, dir, "menu.yaml", "")
	framework.Eventually(t, convergeTimeout, "the removed Service's cluster gone from Envoy", func() error {
		if slices.Contains(backendClusters(t, envoy), "default/tea-2/80") {
			return errors.New("default/tea-2/80 still held")
		}
		return nil
	})
	if err := envoy.Expect("menu.example.com", "/today", http.StatusNotFound, ""); err != nil {
		t.Fatal(err)
	}
	if routeUpdates(t, envoy) == before {
		t.Fatal("the route update did not come")
	}
}

// backendClusters are the clusters Envoy holds that the Ingresses' routes
// send to (namespace/service/port), sorted.
func backendClusters(t *testing.T, envoy *framework.Envoy) []string {
	t.Helper()
	status, body, err := envoy.Admin("/clusters")
	if err != nil || status != http.StatusOK {
		t.Fatalf("envoy /clusters: %d %v", status, err)
	}
	var out []string
	for _, line := range strings.Split(body, "\n") {
		name, rest, ok := strings.Cut(line, "::")
		if ok && strings.HasPrefix(rest, "added_via_api::true") && strings.Count(name, "/") >= 2 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

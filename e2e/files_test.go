package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// convergeTimeout bounds every wait for a change to reach Envoy. It is far
// above the one-second goal on purpose: the measured times are logged, and
// performance is judged from those figures and the benchmarks, not here.
const convergeTimeout = 20 * time.Second

// TestFileMode runs `ingress-xds serve --manifests DIR` with a real Envoy
// bootstrapped by `ingress-xds bootstrap` and two real backends, and checks
// routing by sending requests, then that editing, adding and removing files
// changes the routing of the running Envoy.
func TestFileMode(t *testing.T) {
	b := echoBackends(t, "coffee", "tea")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", servicesYAML(b[0], b[1])},
		manifest{"cafe.yaml", framework.CafeIngressYAML("default", "coffee")})
	dir, envoy := fm.dir, fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })

	// The listener comes over LDS after /ready: wait for the first route.
	framework.Eventually(t, convergeTimeout, "first route served", func() error {
		return envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
	})

	if !t.Run("routing", func(t *testing.T) { testRouting(t, envoy) }) {
		return
	}
	if !t.Run("editing a file reroutes without restarting envoy", func(t *testing.T) {
		// A kept-alive connection opened before the change must see the new
		// route: neither a restart nor a drained listener would allow that.
		session := envoy.NewSession()
		defer session.Close()
		if err := session.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee"); err != nil {
			t.Fatal(err)
		}
		const listenerChanges = "listener_manager.listener_modified"
		rdsBefore, listenersBefore := routeUpdates(t, envoy), stat(t, envoy, listenerChanges)

		writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "tea"))
		took := framework.Eventually(t, convergeTimeout, "reroute after editing cafe.yaml", func() error {
			return session.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
		})
		t.Logf("measured: file edit to rerouted traffic in %s (goal: under 1s; the file source polls every 250ms)", took.Round(time.Millisecond))

		if err := envoy.Exited(); err != nil {
			t.Fatalf("envoy exited: %v", err)
		}
		if n := session.Dials(); n != 1 {
			t.Errorf("the client needed %d connections, want 1: envoy closed the connection during the change", n)
		}
		if after := routeUpdates(t, envoy); after <= rdsBefore {
			t.Errorf("the HTTP routes' updates went from %d to %d: the new routes did not arrive over RDS", rdsBefore, after)
		}
		if after := stat(t, envoy, listenerChanges); after != listenersBefore {
			t.Errorf("%s went from %d to %d: a route change must not rebuild the listener", listenerChanges, listenersBefore, after)
		}
		// The rest of the Ingress is untouched (the kind suite checks the
		// same table).
		expectAll(t, envoy, framework.CafeRerouted())
	}) {
		return
	}
	if !t.Run("a new file adds routes", func(t *testing.T) {
		if err := envoy.Expect("menu.example.com", "/", http.StatusNotFound, ""); err != nil {
			t.Fatalf("before the file exists: %v", err)
		}
		writeManifest(t, dir, "menu.yaml", menuIngressYAML)
		framework.Eventually(t, convergeTimeout, "route from a new file", func() error {
			return envoy.Expect("menu.example.com", "/", http.StatusOK, "coffee")
		})
	}) {
		return
	}
	if !t.Run("a broken file does not stop other changes", func(t *testing.T) {
		writeManifest(t, dir, "broken.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: [not, a, map\n")
		writeManifest(t, dir, "menu.yaml", strings.Replace(menuIngressYAML, "path: /,", "path: /menu,", 1))
		framework.Eventually(t, convergeTimeout, "change applied next to a broken file", func() error {
			return envoy.Expect("menu.example.com", "/", http.StatusNotFound, "")
		})
		expectAll(t, envoy, []framework.RouteCase{
			{Host: "menu.example.com", Path: "/menu", Status: http.StatusOK, Backend: "coffee"},
			{Host: "cafe.example.com", Path: "/coffee", Status: http.StatusOK, Backend: "tea"},
		})
		if err := os.Remove(filepath.Join(dir, "broken.yaml")); err != nil {
			t.Fatal(err)
		}
	}) {
		return
	}
	t.Run("deleting the ingress removes its routes", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "cafe.yaml")); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, convergeTimeout, "routes gone after deleting cafe.yaml", func() error {
			if err := envoy.Expect("cafe.example.com", "/coffee", http.StatusNotFound, ""); err != nil {
				return err
			}
			return envoy.Expect("tea.example.com", "/", http.StatusNotFound, "")
		})
		// The other Ingress keeps working.
		if err := envoy.Expect("menu.example.com", "/menu", http.StatusOK, "coffee"); err != nil {
			t.Error(err)
		}
		// With no Ingress at all, Envoy gets an empty route table and no
		// clusters, which it must accept (checked when the test ends).
		if err := os.Remove(filepath.Join(dir, "menu.yaml")); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, convergeTimeout, "no routes left", func() error {
			return envoy.Expect("menu.example.com", "/menu", http.StatusNotFound, "")
		})
	})
}

// testRouting checks the cafe's routing table, which the kind suite checks
// on a cluster too.
func testRouting(t *testing.T, envoy *framework.Envoy) {
	expectAll(t, envoy, framework.CafeRoutes())
}

// expectAll sends every request once and reports every mismatch.
func expectAll(t *testing.T, envoy *framework.Envoy, cases []framework.RouteCase) {
	t.Helper()
	for _, c := range cases {
		if err := c.Send(envoy.HTTPAddress); err != nil {
			t.Error(err)
		}
	}
}

func stat(t *testing.T, envoy *framework.Envoy, name string) int64 {
	t.Helper()
	v, err := envoy.Stat(name)
	if err != nil {
		t.Fatalf("reading envoy stat %s: %v", name, err)
	}
	return v
}

// routeUpdates is how many updates of the HTTP listener's routes Envoy
// accepted, in whatever form the suite sends them (framework.HTTPRouteUpdates).
func routeUpdates(t *testing.T, envoy *framework.Envoy) int64 {
	t.Helper()
	v, err := framework.HTTPRouteUpdates(envoy)
	if err != nil {
		t.Fatalf("reading envoy's route updates: %v", err)
	}
	return v
}

// assertNothingRejected checks that Envoy accepted every configuration it
// was sent: the control plane must never publish config Envoy refuses.
func assertNothingRejected(t *testing.T, envoy *framework.Envoy) {
	t.Helper()
	assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", httpRoutes)
}

// writeManifest replaces dir/name atomically: the file source must never
// see a half-written file (it skips hidden files, like the temporary one).
func writeManifest(t testing.TB, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// servicesYAML writes the cafe's Services (framework.CafeServices, which
// the kind suite makes on a cluster) with an EndpointSlice each: coffee's
// and tea's endpoints are the two backends; empty's only endpoint is not
// ready (it is the coffee backend, so that a route ignoring readiness would
// reach it).
func servicesYAML(coffee, tea *framework.Backend) string {
	backends := map[string]*framework.Backend{"coffee": coffee, "tea": tea}
	var docs []string
	for _, s := range framework.CafeServices() {
		b, ready := backends[s.Backend], true
		if s.Backend == "" {
			b, ready = coffee, false
		}
		portName := ""
		if s.PortName != "" {
			portName = "name: " + s.PortName + ", "
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: default}
spec:
  ports: [{%[2]sport: 80, targetPort: %[4]d}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-1, namespace: default, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
ports: [{%[2]sport: %[4]d}]
endpoints: [{addresses: [%[3]q], conditions: {ready: %[5]t}}]
`, s.Name, portName, b.Host, b.Port, ready))
	}
	return strings.Join(docs, "---\n")
}

// menuIngressYAML has no class: file mode serves class-less Ingresses.
const menuIngressYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: menu, namespace: default}
spec:
  rules:
  - host: menu.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: coffee, port: {number: 80}}}}
`

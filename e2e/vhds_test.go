package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestVirtualHostDiscovery runs `serve --vhds --manifests DIR` with a real
// Envoy on delta xDS (issue 18): the HTTP listener's virtual hosts come over
// VHDS, one resource per host, and Envoy routes the cafe exactly as with
// one route configuration (exact and one-label wildcard hosts, path
// types, 404 and 503). An Ingress added while it runs is served, and
// reaches Envoy as one VHDS update and no RDS update, without touching the
// listener. It mirrors ingress-nginx's test/e2e/lua/dynamic_configuration.go
// (a change applied to the running proxy, without a reload); the rest of
// the suite runs with --vhds under INGRESS_XDS_E2E_VHDS=1.
func TestVirtualHostDiscovery(t *testing.T) {
	b := echoBackends(t, "coffee", "tea")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", servicesYAML(b[0], b[1]))
	writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "coffee"))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--vhds")
	cp.WaitReady(t)
	envoy := framework.StartEnvoyWith(t, cp, framework.EnvoyOptions{Delta: true})
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "first route served", func() error {
		return envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
	})
	expectAll(t, envoy, framework.CafeRoutes())

	const rdsUpdates, vhdsUpdates, listenerChanges = "http.ingress_http.rds.ingress_http.update_success",
		"http.ingress_http.rds.vhds.ingress_http.update_success", "listener_manager.listener_modified"
	rds, vhds, listeners := stat(t, envoy, rdsUpdates), stat(t, envoy, vhdsUpdates), stat(t, envoy, listenerChanges)
	if vhds == 0 {
		t.Fatalf("%s is 0: the virtual hosts did not come over VHDS", vhdsUpdates)
	}
	writeManifest(t, dir, "menu.yaml", teaMenuIngressYAML)
	framework.Eventually(t, convergeTimeout, "the new host served", func() error {
		return envoy.Expect("menu.example.com", "/today", http.StatusOK, "tea")
	})
	expectAll(t, envoy, framework.CafeRoutes())
	if got := stat(t, envoy, vhdsUpdates); got != vhds+1 {
		t.Errorf("%s went from %d to %d, want one update for one new host", vhdsUpdates, vhds, got)
	}
	if got := stat(t, envoy, rdsUpdates); got != rds {
		t.Errorf("%s went from %d to %d: the route configuration was sent again", rdsUpdates, rds, got)
	}
	if got := stat(t, envoy, listenerChanges); got != listeners {
		t.Errorf("%s went from %d to %d: a new host must not rebuild the listener", listenerChanges, listeners, got)
	}
}

// TestDeltaVirtualHostDiscovery: a control plane as shipped (no flag)
// serves a SotW and a delta Envoy at once (issue 31). Below the route
// scopes' line the delta Envoy takes the HTTP listener's virtual hosts
// over VHDS and the SotW one the route configuration whole, and both route
// the cafe alike, unknown hosts answering 404 at once. A new host then
// reaches the delta Envoy as one VHDS update and no RDS update, so that a
// change sends each delta Envoy one virtual host rather than the table of
// every host, and the SotW Envoy as one RDS update, the table whole.
func TestDeltaVirtualHostDiscovery(t *testing.T) {
	if framework.VHDS() || framework.RouteScopes() > 0 {
		t.Skip("the suite's mode fixes how the routes are split")
	}
	dir, envoys := cafeForBothProtocols(t)
	const rdsUpdates, vhdsUpdates = "http.ingress_http.rds.ingress_http.update_success",
		"http.ingress_http.rds.vhds.ingress_http.update_success"
	type counts struct{ rds, vhds int64 }
	read := func(e *framework.Envoy) counts {
		t.Helper()
		rds := stat(t, e, rdsUpdates)
		vhds, err := e.Stat(vhdsUpdates)
		if err != nil {
			vhds = -1 // no VHDS subscription
		}
		return counts{rds, vhds}
	}
	before := map[string]counts{}
	for _, e := range envoys {
		t.Cleanup(func() { assertNothingRejected(t, e.envoy) })
		framework.Eventually(t, convergeTimeout, e.name+": the cafe served", func() error {
			return e.envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
		})
	}
	for _, e := range envoys {
		expectAll(t, e.envoy, framework.CafeRoutes())
		before[e.name] = read(e.envoy)
	}
	if c := before["sotw"]; c.vhds != -1 {
		t.Errorf("the SotW Envoy subscribed to VHDS (%d updates)", c.vhds)
	}
	if c := before["delta"]; c.vhds < 1 {
		t.Fatalf("the delta Envoy took %d VHDS updates: its virtual hosts did not come over VHDS", c.vhds)
	}

	writeManifest(t, dir, "menu.yaml", teaMenuIngressYAML)
	for _, e := range envoys {
		framework.Eventually(t, convergeTimeout, e.name+": the new host served", func() error {
			return e.envoy.Expect("menu.example.com", "/today", http.StatusOK, "tea")
		})
	}
	for _, e := range envoys {
		expectAll(t, e.envoy, framework.CafeRoutes())
	}
	want := map[string]counts{
		"sotw":  {before["sotw"].rds + 1, -1},
		"delta": {before["delta"].rds, before["delta"].vhds + 1},
	}
	for _, e := range envoys {
		if got := read(e.envoy); got != want[e.name] {
			t.Errorf("%s Envoy: RDS and VHDS updates %+v after the new host, want %+v (before: %+v)", e.name, got, want[e.name], before[e.name])
		}
	}
}

// TestDeltaEnvoyReadyWithoutHosts: a delta Envoy of a control plane as
// shipped, serving no host yet (a new cluster, or one with Gateway API
// routes alone), is ready without waiting out its VHDS subscription's
// initial fetch: Envoy takes an answer of no virtual host as no answer,
// so the control plane sends a virtual host of no host until there is
// one. The first Ingress then comes over VHDS, and its removal answers
// 404 again. The same with serve --vhds, every Envoy's virtual hosts over
// VHDS.
func TestDeltaEnvoyReadyWithoutHosts(t *testing.T) {
	if framework.VHDS() || framework.RouteScopes() > 0 || framework.SotW() {
		t.Skip("the suite's mode fixes how the routes are split")
	}
	for _, mode := range []struct {
		name string
		args []string
	}{{"as-shipped", nil}, {"vhds", []string{"--vhds"}}} {
		t.Run(mode.name, func(t *testing.T) {
			const vhdsTimeouts, vhdsUpdates = "http.ingress_http.rds.vhds.ingress_http.init_fetch_timeout",
				"http.ingress_http.rds.vhds.ingress_http.update_success"
			alpha := echoBackends(t, "alpha")[0]
			fm := startFileModeWith(t, mode.args, manifest{"services.yaml", echoServicesYAML(alpha)})
			t.Cleanup(func() { assertNothingRejected(t, fm.envoy) })
			// Ready (startFileMode waited for it) without a VHDS subscription
			// that timed out.
			if n, err := fm.envoy.Stat(vhdsTimeouts); err == nil && n != 0 {
				t.Fatalf("%s = %d: the Envoy waited out its VHDS initial fetch to be ready", vhdsTimeouts, n)
			}
			writeManifest(t, fm.dir, "first.yaml", hostIngressYAML("first", "first.example.com", "alpha", ""))
			framework.Eventually(t, convergeTimeout, "the first host served", func() error {
				return fm.envoy.Expect("first.example.com", "/", http.StatusOK, "alpha")
			})
			if n := stat(t, fm.envoy, vhdsUpdates); n < 1 {
				t.Errorf("%s = %d: the first host did not come over VHDS", vhdsUpdates, n)
			}
			if n := stat(t, fm.envoy, vhdsTimeouts); n != 0 {
				t.Errorf("%s = %d: the VHDS subscription waited out its initial fetch", vhdsTimeouts, n)
			}
			if err := os.Remove(filepath.Join(fm.dir, "first.yaml")); err != nil {
				t.Fatal(err)
			}
			framework.Eventually(t, convergeTimeout, "the host gone", func() error {
				return fm.envoy.Expect("first.example.com", "/", http.StatusNotFound, "")
			})
		})
	}
}

// teaMenuIngressYAML is one more Ingress for the cafe's tea Service, of a new
// host: the change the VHDS tests time.
const teaMenuIngressYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: menu, namespace: default}
spec:
  ingressClassName: ingress-xds
  rules:
  - host: menu.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: tea, port: {name: http}}}}
`

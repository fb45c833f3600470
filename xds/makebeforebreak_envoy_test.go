package xds

import (
	"context"
	"net/http"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ingress-xds/ingress-xds/translate"
)

// switchedTo is one listener whose only route sends every path to target,
// beside the given clusters (each with one endpoint).
func switchedTo(t testing.TB, port int, target string, clusters map[string]string) *translate.Resources {
	t.Helper()
	r := &translate.Resources{}
	r.Listeners = append(r.Listeners, httpListener(t, "http", port))
	for _, name := range sortedKeys(clusters) {
		r.Clusters = append(r.Clusters, edsCluster(name))
		r.Endpoints = append(r.Endpoints, loadAssignment(t, name, []string{clusters[name]}))
	}
	r.Routes = append(r.Routes, &routev3.RouteConfiguration{Name: fixtureRoute, VirtualHosts: []*routev3.VirtualHost{{
		Name: "all", Domains: []string{"*"},
		Routes: []*routev3.Route{{
			Match:  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
			Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: target}}},
		}},
	}}})
	return r
}

// A path switched to a Service Envoy has no cluster of is served without
// an error: the route that names the new cluster reaches each Envoy only
// once it has acknowledged the cluster and its load assignment
// (make-before-break, makebeforebreak.go). Without it, the route arrives
// while the new cluster still waits for its endpoints, and Envoy answers
// 503 (no healthy upstream) in between. A client polls through Envoy all
// along; no request may fail, before, during or after the switch, over
// both protocols, for several switches.
func TestMakeBeforeBreakEnvoy(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			ts := startServer(t)
			port := freePort(t)
			clusters := map[string]string{"c0": backend(t, "c0")}
			if _, err := ts.Publish(context.Background(), switchedTo(t, port, "c0", clusters)); err != nil {
				t.Fatal(err)
			}
			e := startEnvoy(t, ts.addr, "mbb-"+protocol, delta, nil)
			waitSynced(t, ts, e.nodeID)
			expectBackend(t, port, "/", "c0")
			failures := map[int]int{}
			const switches = 5
			for i := 1; i <= switches; i++ {
				name := "c" + string(rune('0'+i))
				clusters[name] = backend(t, name)
				if _, err := ts.Publish(context.Background(), switchedTo(t, port, name, clusters)); err != nil {
					t.Fatal(err)
				}
				// Poll until the new backend answers; every answer in
				// between must be the old backend or the new one.
				for polls := 0; ; polls++ {
					status, body, err := through(port, "/")
					if err != nil {
						t.Fatalf("switch %d, poll %d: %v", i, polls, err)
					}
					if status != http.StatusOK {
						failures[status]++
						if polls > 100000 {
							t.Fatalf("switch %d: still %d %q after %d polls", i, status, body, polls)
						}
						continue
					}
					if body == name {
						break
					}
				}
			}
			if len(failures) > 0 {
				t.Errorf("over %d switches to a new cluster, Envoy answered (status: count) %v; want only 200s", switches, failures)
			}
		})
	}
}

package xds

import (
	"fmt"
	"slices"
	"testing"

	adminv3 "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Both protocols, with a real Envoy: configuration arrives and carries
// traffic, and a change to endpoints alone sends EDS and nothing else: only
// the one ClusterLoadAssignment that changed.
func TestEnvoyServedOverSotWAndDelta(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			ts := startServer(t)
			port := freePort(t)
			f := fixture{listenerPort: port, clusters: map[string][]string{
				"a": {backend(t, "a1")},
				"b": {backend(t, "b1")},
			}}
			ts.publish(t, f)
			e := startEnvoy(t, ts.addr, "envoy-"+protocol, delta, nil)
			expectBackend(t, port, "/a", "a1")
			expectBackend(t, port, "/b", "b1")
			waitSynced(t, ts, e.nodeID)

			types := []string{"listener", "route", "cluster", "endpoint"}
			pushes := map[string]float64{}
			sent := map[string]float64{}
			for _, typ := range types {
				pushes[typ] = ts.counter(t, "pushes", typ, protocol)
				sent[typ] = ts.counter(t, "pushed_resources", typ, protocol)
			}
			envoyUpdates := map[string]uint64{}
			envoyStats := []string{
				"listener_manager.lds.update_success", "cluster_manager.cds.update_success",
				"http.http.rds.http.update_success", "cluster.a.update_success",
			}
			for _, s := range envoyStats {
				envoyUpdates[s] = e.stat(s)
			}
			before := ts.Snapshot()

			// Endpoints of cluster a change; nothing else does.
			f.clusters["a"] = []string{backend(t, "a2")}
			ts.publish(t, f)
			after := ts.Snapshot()
			for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType} {
				if before.GetVersion(typ) != after.GetVersion(typ) {
					t.Errorf("%s version changed from %s to %s on an endpoint-only change", typ, before.GetVersion(typ), after.GetVersion(typ))
				}
			}
			if before.GetVersion(resource.EndpointType) == after.GetVersion(resource.EndpointType) {
				t.Fatal("endpoint version did not change")
			}
			expectBackend(t, port, "/a", "a2")
			expectBackend(t, port, "/b", "b1")
			waitSynced(t, ts, e.nodeID)

			for _, typ := range []string{"listener", "route", "cluster"} {
				if got := ts.counter(t, "pushes", typ, protocol) - pushes[typ]; got != 0 {
					t.Errorf("%d %s responses sent for an endpoint-only change, want none", int(got), typ)
				}
			}
			if got := ts.counter(t, "pushes", "endpoint", protocol) - pushes["endpoint"]; got != 1 {
				t.Errorf("%v endpoint responses sent, want 1", got)
			}
			// Only the ClusterLoadAssignment that changed is sent, in delta
			// and in SotW alike (SotW responses must hold every listener
			// and cluster, not every load assignment).
			if got := ts.counter(t, "pushed_resources", "endpoint", protocol) - sent["endpoint"]; got != 1 {
				t.Errorf("%v ClusterLoadAssignments sent, want 1", got)
			}
			// Envoy agrees: it applied an EDS update and nothing else.
			for _, s := range envoyStats[:3] {
				if got := e.stat(s); got != envoyUpdates[s] {
					t.Errorf("envoy %s went from %d to %d", s, envoyUpdates[s], got)
				}
			}
			if got := e.stat("cluster.a.update_success"); got <= envoyUpdates["cluster.a.update_success"] {
				t.Errorf("envoy cluster.a.update_success stayed at %d", got)
			}
		})
	}
}

// waitSynced waits until CSDS reports that the node runs exactly the
// current snapshot: every resource of every type ACKED and SYNCED.
func waitSynced(t testing.TB, ts *testServer, nodeID string) {
	t.Helper()
	eventually(t, nodeID+" in sync", func() error { return synced(ts, nodeID) })
}

func synced(ts *testServer, nodeID string) error {
	resp, err := ts.clientStatus(&statusservice.ClientStatusRequest{})
	if err != nil {
		return err
	}
	snap := ts.Snapshot()
	for _, cfg := range resp.GetConfig() {
		if cfg.GetNode().GetId() != nodeID {
			continue
		}
		got := map[string][]string{}
		for _, g := range cfg.GetGenericXdsConfigs() {
			if g.GetClientStatus() != adminv3.ClientResourceStatus_ACKED || g.GetConfigStatus() != statusservice.ConfigStatus_SYNCED {
				return fmt.Errorf("%s %s: %v/%v (version %s)", g.GetTypeUrl(), g.GetName(), g.GetClientStatus(), g.GetConfigStatus(), g.GetVersionInfo())
			}
			got[g.GetTypeUrl()] = append(got[g.GetTypeUrl()], g.GetName())
		}
		for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType} {
			want := sortedKeys(snap.GetResources(typ))
			if !slices.Equal(got[typ], want) {
				return fmt.Errorf("%s: node runs %v, snapshot has %v", typ, got[typ], want)
			}
		}
		return nil
	}
	return fmt.Errorf("node %s not connected", nodeID)
}

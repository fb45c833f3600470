package xds

import (
	"fmt"
	"log/slog"
	"net"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// A control plane that stops and comes back with the same cluster state:
// the stop is graceful (Envoy keeps its configuration and goes on serving
// traffic), the new process derives the very same versions from the same
// content, and Envoy rebuilds nothing when it reconnects. In delta, the new
// process does not even resend a resource.
func TestRestartKeepsEnvoyConfigAndVersions(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			port := freePort(t)
			f := fixture{listenerPort: port, clusters: map[string][]string{
				"a": {backend(t, "a1")},
				"b": {backend(t, "b1")},
			}}
			first := startServerAt(t, localAddr(freePort(t))) // listened on again below
			first.publish(t, f)
			e := startEnvoy(t, first.addr, "restarted-"+protocol, delta, nil)
			waitSynced(t, first, e.nodeID)
			expectBackend(t, port, "/a", "a1")

			// Envoy's own record of what it built so far.
			rebuilds := []string{
				"listener_manager.listener_added", "listener_manager.listener_modified", "listener_manager.listener_removed",
				"cluster_manager.cluster_added", "cluster_manager.cluster_modified", "cluster_manager.cluster_removed",
				"http.http.rds.http.config_reload",
				"listener_manager.lds.version", "cluster_manager.cds.version",
			}
			before := map[string]uint64{}
			for _, s := range rebuilds {
				before[s] = e.stat(s)
			}
			versions := map[string]string{}
			for _, typ := range servedTypes {
				versions[typ] = first.Snapshot().GetVersion(typ)
			}

			first.stop()
			// Graceful: the streams ended cleanly, not cut by the timeout.
			if len(first.logs.lines("xDS server stopped")) != 1 || len(first.logs.lines("did not stop gracefully")) != 0 {
				t.Errorf("the server did not stop gracefully:\n%s", first.logs.String())
			}
			eventually(t, "envoy notices the control plane is gone", func() error {
				if n := e.stat("control_plane.connected_state"); n != 0 {
					return fmt.Errorf("control_plane.connected_state = %d", n)
				}
				return nil
			})
			// Still configured, still serving.
			expectBackend(t, port, "/a", "a1")
			expectBackend(t, port, "/b", "b1")

			// A new process: new Server, resources built anew, same address.
			lis, err := net.Listen("tcp", first.addr)
			if err != nil {
				t.Fatalf("listening again on %s: %v", first.addr, err)
			}
			logs := &logBuffer{}
			second := serveOn(t, NewServer(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), lis, logs)
			second.publish(t, f)
			for _, typ := range servedTypes {
				if got := second.Snapshot().GetVersion(typ); got != versions[typ] {
					t.Errorf("%s: version %s after the restart, %s before", typ, got, versions[typ])
				}
			}
			waitSynced(t, second, e.nodeID)
			expectBackend(t, port, "/a", "a1")

			for _, s := range rebuilds {
				if got := e.stat(s); got != before[s] {
					t.Errorf("envoy %s went from %d to %d across the restart", s, before[s], got)
				}
			}
			if delta {
				for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType} {
					if n := second.counter(t, "pushed_resources", typeName(typ), protocolDelta); n != 0 {
						t.Errorf("the restarted server sent %v %s resources that Envoy already had", n, typeName(typ))
					}
				}
			}
		})
	}
}

package xds

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/proto"
)

// The bootstrap's statistics, with a real Envoy: "operators" keeps the
// stats the project's tests and an operator read, drops the rest (circuit
// breakers, load balancer, histograms of clusters), and creates a
// cluster's traffic stats only once it has traffic; "all" is Envoy's
// default, every stat of every cluster from the start.
func TestBootstrapStatsWithEnvoy(t *testing.T) {
	toolPath(t, "envoy")
	for _, mode := range StatsModes {
		t.Run(mode, func(t *testing.T) {
			ts := startServer(t)
			port := freePort(t)
			f := fixture{listenerPort: port, clusters: map[string][]string{
				"a": {backend(t, "a1")},
				"b": {backend(t, "b1")}, // never sent a request
			}}
			ts.publish(t, f)
			e := startEnvoy(t, ts.addr, "envoy-stats-"+mode, false, func(b *bootstrapv3.Bootstrap) {
				b.StatsConfig, b.DeferredStatOptions = nil, nil
				if err := applyStats(b, mode); err != nil {
					t.Fatal(err)
				}
			})
			expectBackend(t, port, "/a", "a1")
			waitSynced(t, ts, e.nodeID)
			_, body, err := e.get("/stats")
			if err != nil {
				t.Fatal(err)
			}
			stats := map[string]bool{}
			for _, line := range strings.Split(body, "\n") {
				if name, _, ok := strings.Cut(line, ": "); ok {
					stats[name] = true
				}
			}
			// What the tests of this repository (and the load command)
			// read, kept in either mode.
			for _, name := range []string{
				"server.live", "server.memory_allocated", "control_plane.connected_state",
				"listener_manager.lds.update_success", "listener_manager.lds.update_rejected", "listener_manager.listener_modified",
				"cluster_manager.cds.update_success", "cluster_manager.cds.update_rejected", "cluster_manager.cluster_added",
				"http.http.rds.http.update_success", "http.http.rds.http.update_rejected", "http.http.rds.http.config_reload",
				"http.http.downstream_rq_total", "http.http.downstream_rq_2xx",
				"cluster.a.update_success", "cluster.a.update_rejected", "cluster.b.update_success",
				"cluster.a.upstream_rq_total", "cluster.a.upstream_rq_2xx", "cluster.a.upstream_cx_total",
				"cluster.a.membership_healthy", "cluster.b.membership_total",
				"cluster." + XDSClusterName + ".upstream_cx_total", "cluster." + XDSClusterName + ".upstream_cx_rx_bytes_total",
				"cluster." + XDSClusterName + ".upstream_cx_destroy_remote",
			} {
				if !stats[name] {
					t.Errorf("stat %s missing", name)
				}
			}
			// What only "all" has.
			for _, name := range []string{
				"cluster.b.upstream_rq_total",                // no traffic: deferred
				"cluster.a.circuit_breakers.default.cx_open", // dropped
				"cluster.a.lb_healthy_panic",                 // dropped
				"cluster.a.upstream_cx_connect_ms",           // a cluster's histogram, dropped
				"cluster.b.upstream_cx_none_healthy",         // deferred and dropped
			} {
				if stats[name] != (mode == StatsAll) {
					t.Errorf("stat %s: present %v, want %v with %s", name, stats[name], mode == StatsAll, mode)
				}
			}
			perCluster := regexp.MustCompile(`^cluster\.b\.`)
			n := 0
			for name := range stats {
				if perCluster.MatchString(name) {
					n++
				}
			}
			t.Logf("%s: %d stats in all, %d of cluster b (no traffic)", mode, len(stats), n)
			if mode == StatsOperators && n > 5 {
				t.Errorf("%d stats of a cluster without traffic, want at most 5 (membership, EDS updates)", n)
			}
		})
	}
}

// The overload manager with a heap limit Envoy is already past: every
// action is on, and a request through Envoy is refused (its connection
// rejected, or a 503) without reaching the backend; the same Envoy
// without the limit serves it. Nothing is timed: Envoy's overload stats
// say the actions are on.
func TestBootstrapOverloadShedsWithEnvoy(t *testing.T) {
	toolPath(t, "envoy")
	for _, limited := range []bool{false, true} {
		name := map[bool]string{false: "no limit", true: "past the limit"}[limited]
		t.Run(name, func(t *testing.T) {
			ts := startServer(t)
			port := freePort(t)
			hits := 0
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				hits++
				w.Write([]byte("a1"))
			})}
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(lis)
			t.Cleanup(func() { srv.Close() })
			ts.publish(t, fixture{listenerPort: port, clusters: map[string][]string{"a": {lis.Addr().String()}}})
			e := startEnvoy(t, ts.addr, "envoy-overload-"+strings.ReplaceAll(name, " ", "-"), false, func(b *bootstrapv3.Bootstrap) {
				if !limited {
					return
				}
				// 1 MiB: Envoy's heap is several times that once started.
				om, err := overloadManager(1 << 20)
				if err != nil {
					t.Fatal(err)
				}
				b.OverloadManager = om
			})
			waitSynced(t, ts, e.nodeID)
			if !limited {
				expectBackend(t, port, "/a", "a1")
				if n := e.stat("overload.envoy.overload_actions.stop_accepting_requests.active"); n != 0 {
					t.Errorf("stop_accepting_requests active = %d without a limit", n)
				}
				return
			}
			actions := []string{
				"overload.envoy.overload_actions.shrink_heap.active",
				"overload.envoy.overload_actions.disable_http_keepalive.active",
				"overload.envoy.overload_actions.stop_accepting_requests.active",
			}
			eventually(t, "every overload action active", func() error {
				for _, s := range actions {
					if e.stat(s) != 1 {
						_, body, _ := e.get("/stats?filter=^overload")
						return &statsError{s, body}
					}
				}
				return nil
			})
			if n := e.stat("overload.envoy.load_shed_points.tcp_listener_accept.scale_percent"); n != 100 {
				t.Errorf("the listener's load shed point at %d%%, want 100", n)
			}
			// Envoy is up, has the route, and refuses the request.
			for range 3 {
				status, body, err := through(port, "/a")
				if err == nil && status != http.StatusServiceUnavailable {
					t.Errorf("GET /a past the heap limit: %d %q, want a refused connection or 503", status, body)
				}
			}
			if hits != 0 {
				t.Errorf("the backend answered %d requests past the heap limit, want 0", hits)
			}
			// Each of the three was the listener's to refuse. The worker
			// counts a refusal after closing the socket, so the client
			// may see the close before the count.
			listener := "listener.127.0.0.1_" + strconv.Itoa(port) + ".downstream_cx_overload_reject"
			eventually(t, listener+" at 3", func() error {
				if n := e.stat(listener); n < 3 {
					_, body, _ := e.get("/stats?filter=" + `overload`)
					return fmt.Errorf("%s = %d, want at least 3:\n%s", listener, n, body)
				}
				return nil
			})
		})
	}
}

type statsError struct{ stat, stats string }

func (e *statsError) Error() string { return e.stat + " not 1 in:\n" + e.stats }

// Bootstrap's options reach the two levers.
func TestBootstrapLeverOptions(t *testing.T) {
	base := BootstrapOptions{XDSAddress: "127.0.0.1:18000", NodeID: "n", AdminAddress: "127.0.0.1:9901"}
	b, err := Bootstrap(base)
	if err != nil {
		t.Fatal(err)
	}
	if b.GetStatsConfig().GetStatsMatcher().GetInclusionList() == nil || !b.GetDeferredStatOptions().GetEnableDeferredCreationStats() {
		t.Errorf("the default bootstrap keeps every stat: %v %v", b.GetStatsConfig(), b.GetDeferredStatOptions())
	}
	if b.GetOverloadManager() != nil {
		t.Errorf("an overload manager without a heap limit: %v", b.GetOverloadManager())
	}
	if !b.GetClusterManager().GetEnableDeferredClusterCreation() {
		t.Error("workers create every cluster up front")
	}
	all := base
	all.Stats = StatsAll
	if b, err = Bootstrap(all); err != nil {
		t.Fatal(err)
	}
	if b.GetStatsConfig() != nil || b.GetDeferredStatOptions() != nil {
		t.Errorf("stats all: %v %v, want Envoy's defaults", b.GetStatsConfig(), b.GetDeferredStatOptions())
	}
	bad := base
	bad.Stats = "some"
	if _, err := Bootstrap(bad); err == nil {
		t.Error("stats \"some\" accepted")
	}
	heap := base
	heap.MaxHeapBytes = 900 << 20
	if b, err = Bootstrap(heap); err != nil {
		t.Fatal(err)
	}
	want, err := overloadManager(900 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(b.GetOverloadManager(), want) {
		t.Errorf("overload manager %v, want %v", b.GetOverloadManager(), want)
	}
}

// TestBootstrapStatsOfRouteScopes: "operators" drops the per-configuration
// RDS stats of route scopes (twelve a scope) but their update counts and
// rebuilds, and
// keeps every other stat of a connection manager. The inclusion list is
// evaluated as Envoy does: a name is kept when any pattern matches it, a
// regular expression the whole name.
func TestBootstrapStatsOfRouteScopes(t *testing.T) {
	b, err := Bootstrap(BootstrapOptions{XDSAddress: "127.0.0.1:18000", NodeID: "n", AdminAddress: "127.0.0.1:9901"})
	if err != nil {
		t.Fatal(err)
	}
	kept := func(name string) bool {
		for _, p := range b.GetStatsConfig().GetStatsMatcher().GetInclusionList().GetPatterns() {
			switch {
			case p.GetPrefix() != "" && strings.HasPrefix(name, p.GetPrefix()),
				p.GetSuffix() != "" && strings.HasSuffix(name, p.GetSuffix()),
				p.GetSafeRegex() != nil && regexp.MustCompile(`^(?:`+p.GetSafeRegex().GetRegex()+`)$`).MatchString(name):
				return true
			}
		}
		return false
	}
	for name, want := range map[string]bool{
		"http.ingress_http.downstream_rq_total":                    true,
		"http.ingress_http.downstream_rq_2xx":                      true,
		"http.ingress_http.rq_direct_response":                     true,
		"http.ingress_http.rds.ingress_http.config_reload":         true,
		"http.ingress_http.rds.ingress_http.version_text":          true,
		"http.ingress_http.scoped_rds.ingress_http.update_success": true,
		"http.ingress_http.vhds.ingress_http.update_rejected":      true,
		"http.admin.downstream_rq_2xx":                             true,
		"http.ingress_http.rds.ingress_http/17.update_success":     true,
		"http.ingress_http.rds.ingress_http/17.update_rejected":    true,
		"http.ingress_http.rds.ingress_http/17.update_failure":     true,
		"http.ingress_http.rds.ingress_http/17.config_reload":      true,
		"http.ingress_http.rds.ingress_http/17.update_time":        false,
		"http.ingress_http.rds.ingress_http/4095.version_text":     false,
		"http.ingress_http.rds.ingress_http/17.init_fetch_timeout": false,
		"cluster.svc-000001.circuit_breakers.default.cx_open":      false,
		"listener_manager.lds.update_success":                      true,
	} {
		if kept(name) != want {
			t.Errorf("stat %s: kept %v, want %v", name, !want, want)
		}
	}
}

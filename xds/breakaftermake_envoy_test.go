package xds

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	ondemandv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/on_demand/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"time"

	"github.com/ingress-xds/ingress-xds/translate"
)

// withOnDemand puts Envoy's on_demand filter (ODCDS over ADS) before the
// router of a listener made by httpListener, as the renderer does with
// --on-demand-clusters, and marks every cluster lazy.
func withOnDemand(t testing.TB, r *translate.Resources) *translate.Resources {
	t.Helper()
	od, err := anypb.New(&ondemandv3.OnDemand{Odcds: &ondemandv3.OnDemandCds{Source: adsSource(), Timeout: durationpb.New(5 * time.Second)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range r.Listeners {
		f := l.GetFilterChains()[0].GetFilters()[0]
		hcm := &hcmv3.HttpConnectionManager{}
		if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
			t.Fatal(err)
		}
		hcm.HttpFilters = append([]*hcmv3.HttpFilter{{Name: "envoy.filters.http.on_demand", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: od}}}, hcm.HttpFilters...)
		a, err := anypb.New(hcm)
		if err != nil {
			t.Fatal(err)
		}
		f.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: a}
	}
	r.OnDemand = &translate.OnDemand{Eager: map[string]struct{}{}}
	return r
}

// A path switched back and forth between two Services, each switch
// removing the cluster it switches from (no other route names it), is
// served without an error (break-after-make, breakaftermake.go): the
// cluster switched from stays in what Envoy holds until Envoy has
// acknowledged the routes that stop using it. Without it, Envoy drops the
// cluster with the change (delta: removed; SotW: absent from the full
// state) while its old route still sends requests there, and answers 503
// (no cluster) until the new route comes. A client polls through Envoy all
// along. Over SotW, delta, and delta with on-demand clusters (where the
// on_demand filter would ask again for the removed cluster and be told it
// is gone). Afterwards the cluster switched from leaves Envoy.
func TestBreakAfterMakeEnvoy(t *testing.T) {
	toolPath(t, "envoy")
	for _, mode := range []string{"sotw", "delta", "delta-on-demand"} {
		t.Run(mode, func(t *testing.T) {
			delta, onDemand := mode != "sotw", strings.HasSuffix(mode, "on-demand")
			ts := startServer(t)
			port := freePort(t)
			addrs := map[string]string{"a": backend(t, "a"), "b": backend(t, "b")}
			only := func(target string) *translate.Resources {
				r := switchedTo(t, port, target, map[string]string{target: addrs[target]})
				if onDemand {
					r = withOnDemand(t, r)
				}
				return r
			}
			if _, err := ts.Publish(context.Background(), only("a")); err != nil {
				t.Fatal(err)
			}
			e := startEnvoy(t, ts.addr, "bam-"+mode, delta, nil)
			expectBackend(t, port, "/", "a")
			failures := map[int]int{}
			const switches = 6
			target := "a"
			for i := 1; i <= switches; i++ {
				from := target
				target = map[string]string{"a": "b", "b": "a"}[from]
				if _, err := ts.Publish(context.Background(), only(target)); err != nil {
					t.Fatal(err)
				}
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
					if body == target {
						break
					}
					if body != from {
						t.Fatalf("switch %d: answered by %q, want %s or %s", i, body, from, target)
					}
				}
			}
			if len(failures) > 0 {
				t.Errorf("over %d switches each removing the cluster switched from, Envoy answered (status: count) %v; want only 200s", switches, failures)
			}
			// No leak: the cluster switched from leaves what is published,
			// and Envoy.
			gone := map[string]string{"a": "b", "b": "a"}[target]
			eventuallyClusters(t, ts.Server, "the last switch acknowledged", target)
			eventually(t, "cluster "+gone+" gone from envoy", func() error {
				_, body, err := e.get("/clusters")
				if err != nil {
					return err
				}
				if strings.Contains(body, "\n"+gone+"::") || strings.HasPrefix(body, gone+"::") {
					return fmt.Errorf("envoy still has cluster %s", gone)
				}
				return nil
			})
		})
	}
}

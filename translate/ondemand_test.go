package translate_test

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	aggregatev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/clusters/aggregate/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxyv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/envoytest"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	"github.com/ingress-xds/ingress-xds/xds"
)

// checkOnDemand holds a translation with on-demand clusters (serve
// --on-demand-clusters, translate/envoy/ondemand.go) to what Envoy needs:
// every HTTP connection manager starts with the on_demand filter, and every
// cluster Envoy must hold ahead of a request is eager: those requests are
// mirrored to, aggregate clusters and theirs, TLS passthrough's. It returns
// how many clusters are lazy.
func checkOnDemand(t *testing.T, res *translate.Resources, at string) int {
	t.Helper()
	if res.OnDemand == nil {
		t.Fatalf("%s: no on-demand clusters", at)
	}
	mustEager := map[string]string{}
	for _, l := range res.Listeners {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				msg, err := f.GetTypedConfig().UnmarshalNew()
				if err != nil {
					t.Fatal(err)
				}
				switch m := msg.(type) {
				case *hcmv3.HttpConnectionManager:
					if first := m.GetHttpFilters()[0]; first.GetName() != "envoy.filters.http.on_demand" || !first.GetDisabled() {
						t.Fatalf("%s: listener %s chain %q starts with %s (disabled %v), not the on_demand filter, off", at, l.GetName(), fc.GetName(), first.GetName(), first.GetDisabled())
					}
				case *tcpproxyv3.TcpProxy:
					if m.GetCluster() != "" {
						mustEager[m.GetCluster()] = "passthrough"
					}
					for _, w := range m.GetWeightedClusters().GetClusters() {
						mustEager[w.GetName()] = "passthrough split"
					}
				}
			}
		}
	}
	for _, stored := range res.Routes {
		rc := decodedRoutes(t, stored)
		// On in every route configuration, so only for requests with a
		// route (a 404 must not ask the control plane for a virtual host).
		if rc.GetTypedPerFilterConfig()["envoy.filters.http.on_demand"] == nil {
			t.Fatalf("%s: route configuration %s does not turn the on_demand filter on", at, rc.GetName())
		}
		for _, vh := range rc.GetVirtualHosts() {
			for _, r := range vh.GetRoutes() {
				for _, mp := range r.GetRoute().GetRequestMirrorPolicies() {
					mustEager[mp.GetCluster()] = "mirror"
				}
			}
		}
	}
	for _, vh := range res.VirtualHosts {
		for _, r := range vh.GetRoutes() {
			for _, mp := range r.GetRoute().GetRequestMirrorPolicies() {
				mustEager[mp.GetCluster()] = "mirror"
			}
		}
	}
	lazy := 0
	for _, cl := range res.Clusters {
		if c, ok := cl.(*clusterv3.Cluster); ok && c.GetClusterType() != nil {
			var agg aggregatev3.ClusterConfig
			if err := c.GetClusterType().GetTypedConfig().UnmarshalTo(&agg); err == nil {
				mustEager[c.GetName()] = "aggregate"
				for _, member := range agg.GetClusters() {
					mustEager[member] = "aggregate member"
				}
			}
		}
		if res.OnDemand.Lazy(cl.GetName()) {
			lazy++
		}
	}
	for name, why := range mustEager {
		if res.OnDemand.Lazy(name) {
			t.Fatalf("%s: cluster %s (%s) comes on demand; Envoy needs it ahead of any request", at, name, why)
		}
	}
	return lazy
}

// TestOnDemandClusters translates every golden case merged with on-demand
// clusters: each is valid for the real Envoy (`envoy --mode validate`), and
// what must be eager is. Then the random series of
// TestTranslatorMatchesFreshTranslation: the incremental translator's
// output and eager clusters are a fresh translation's at every step.
func TestOnDemandClusters(t *testing.T) {
	opts := goldenOptions
	opts.OnDemandClusters = true
	// Mirror targets need it (they name a host as ExternalName does).
	opts.EnableExternalName = true
	st := mergedGoldenState(t)
	tr := translate.NewTranslator(opts)
	first, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	if lazy := checkOnDemand(t, first.Resources, "first"); lazy == 0 {
		t.Fatal("no cluster comes on demand")
	}
	if !testing.Short() {
		envoytest.Validate(t, envoytest.Binary(t), first.Resources)
	}
	// Each case alone too: merged, some hosts' routes are another case's.
	mirrored := 0
	for _, input := range goldenCases(t) {
		st, err := kube.LoadStateWith(input, kube.ClassFilter{WatchClassless: true}, goldenReferences)
		if err != nil {
			t.Fatal(err)
		}
		res, err := translate.Translate(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkOnDemand(t, res.Resources, input)
		for _, stored := range res.Resources.Routes {
			for _, vh := range decodedRoutes(t, stored).GetVirtualHosts() {
				for _, r := range vh.GetRoutes() {
					mirrored += len(r.GetRoute().GetRequestMirrorPolicies())
				}
			}
		}
	}
	if mirrored == 0 {
		t.Fatal("no golden case mirrors: the mirror clusters' rule is not tested")
	}
	rng := rand.New(rand.NewSource(3))
	for step := 0; step < 100; step++ {
		desc := mutate(rng, st)
		var got *translate.Result
		if svc, ok := endpointChange(desc); ok && step%2 == 0 {
			var fast bool
			got, fast = tr.UpdateEndpoints(map[types.NamespacedName][]*kube.EndpointSlice{svc: st.EndpointSlices[svc]})
			if !fast {
				t.Fatalf("step %d: no fast path after a full translation", step)
			}
		} else if got, err = tr.Translate(st); err != nil {
			t.Fatal(err)
		}
		at := fmt.Sprintf("step %d (%s)", step, desc)
		want := sameAsFresh(t, got, st, opts, at)
		if g, w := slices.Sorted(maps.Keys(got.Resources.OnDemand.Eager)), slices.Sorted(maps.Keys(want.Resources.OnDemand.Eager)); !slices.Equal(g, w) {
			t.Fatalf("%s: eager clusters %v, a fresh translation's %v", at, g, w)
		}
		checkOnDemand(t, got.Resources, at)
		if _, err := xds.NewSnapshot(got.Resources); err != nil {
			t.Fatalf("%s: not a consistent snapshot: %v", at, err)
		}
	}
	// Without the option, nothing is lazy and no chain has the filter.
	plain, err := translate.Translate(st, goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Resources.OnDemand != nil {
		t.Fatal("on-demand clusters without the option")
	}
	for _, l := range plain.Resources.Listeners {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				if hcm := hcmOf(t, f); hcm != nil && hcm.GetHttpFilters()[0].GetName() == "envoy.filters.http.on_demand" {
					t.Fatalf("listener %s has the on_demand filter without the option", l.GetName())
				}
			}
		}
	}
}

func hcmOf(t *testing.T, f *listenerv3.Filter) *hcmv3.HttpConnectionManager {
	t.Helper()
	msg, err := f.GetTypedConfig().UnmarshalNew()
	if err != nil {
		t.Fatal(err)
	}
	hcm, _ := msg.(*hcmv3.HttpConnectionManager)
	return hcm
}

// decodedRoutes is a route configuration as Envoy reads it: the renderer's
// may keep its virtual hosts encoded (translate/envoy/encoded.go).
func decodedRoutes(t *testing.T, rc *routev3.RouteConfiguration) *routev3.RouteConfiguration {
	t.Helper()
	raw, err := proto.Marshal(rc)
	if err != nil {
		t.Fatal(err)
	}
	var out routev3.RouteConfiguration
	if err := proto.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

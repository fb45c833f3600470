package gatewayapi_test

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
)

// TestBuilderHandsOutUnchangedValues holds the Builder to the IR's
// contract: the same IR while nothing it reads changed; after a Route
// change, the same backends and clusters (whose Services and
// EndpointSlices did not change); after an EndpointSlice change, a new
// backend for that Service alone. Each equals a fresh build.
func TestBuilderHandsOutUnchangedValues(t *testing.T) {
	st, err := kube.LoadState("testdata/basic.yaml", kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatal(err)
	}
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)
	if b.Build(st) != first {
		t.Fatal("an unchanged State gave a new IR")
	}

	next := *st
	g := *st.Gateway
	g.HTTPRoutes = slices.Clone(g.HTTPRoutes)
	for i, r := range g.HTTPRoutes {
		if r.Name == "shop" {
			r = r.DeepCopy()
			r.Spec.Hostnames[0] = "store.example.com"
			g.HTTPRoutes[i] = r
		}
	}
	next.Gateway = &g
	second := b.Build(&next)
	if second == first {
		t.Fatal("a changed HTTPRoute gave the same IR")
	}
	if !slices.Equal(second.Backends, first.Backends) || !slices.Equal(second.Clusters, first.Clusters) {
		t.Error("a Route change made new backends or clusters for unchanged Services")
	}
	sameAsFresh(t, second, &next)

	third := next
	third.EndpointSlices = maps.Clone(next.EndpointSlices)
	v1 := types.NamespacedName{Namespace: "default", Name: "shop-v1"}
	changed := *third.EndpointSlices[v1][0]
	changed.Ready = []string{"10.0.0.9"}
	third.EndpointSlices[v1] = []*kube.EndpointSlice{&changed}
	out := b.Build(&third)
	for i, be := range out.Backends {
		if fresh := be.Service == v1; fresh == (be == second.Backends[i]) {
			t.Errorf("backend %s: new %t, want new only for the changed Service", be.Name, be != second.Backends[i])
		}
	}
	sameAsFresh(t, out, &third)
}

func sameAsFresh(t *testing.T, got interface{ Validate() error }, st *kube.State) {
	t.Helper()
	want := gatewayapi.Build(st, goldenOptions)
	gotJSON, wantJSON := mustJSON(t, got), mustJSON(t, want)
	if gotJSON != wantJSON {
		t.Errorf("the Builder's IR differs from a fresh build's:\n got %s\nwant %s", gotJSON, wantJSON)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := envoy.IndentJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

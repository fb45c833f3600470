package gatewayapi_test

import (
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
)

// TestBuilderHandsOutUnchangedValues holds the Builder to the IR's
// contract: the same IR while nothing it reads changed; after a Route
// change, the same backends and clusters (whose Services and
// EndpointSlices did not change) and the same routes of the other
// Routes; after an EndpointSlice change, a new backend for that Service
// alone. Each equals a fresh build.
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
	// The unchanged Route's routes are the same values (the catch-all
	// host is its alone).
	if first.VirtualHosts[0].Host != "*" || second.VirtualHosts[0].Host != "*" || !slices.Equal(second.VirtualHosts[0].Routes, first.VirtualHosts[0].Routes) {
		t.Error("a Route change made new routes for another, unchanged Route")
	}
	sameAsFresh(t, b, second, &next)

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
	sameAsFresh(t, b, out, &third)
}

// sameAsFresh compares the Builder's IR and status with a fresh build's.
func sameAsFresh(t *testing.T, b *gatewayapi.Builder, got any, st *kube.State) {
	t.Helper()
	want, status := gatewayapi.BuildWithStatus(st, goldenOptions)
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("the Builder's IR differs from a fresh build's:\n got %s\nwant %s", g, w)
	}
	if g, w := mustJSON(t, b.Status()), mustJSON(t, status); g != w {
		t.Errorf("the Builder's status differs from a fresh build's:\n got %s\nwant %s", g, w)
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

// TestBuilderMatchesFreshBuild runs a random series of changes over every
// golden case's objects at once (of two of one name, the later file's),
// as sources make them (changed objects and lists are new values), and
// holds the Builder's IR and status to a fresh build's after each.
func TestBuilderMatchesFreshBuild(t *testing.T) {
	var objs kube.Objects
	for _, input := range goldenCases(t) {
		f, err := os.Open(input)
		if err != nil {
			t.Fatal(err)
		}
		err = kube.DecodeManifests(f, input, &objs)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	st := objs.State(kube.ClassFilter{WatchClassless: true})
	b := gatewayapi.NewBuilder(goldenOptions)
	rng := rand.New(rand.NewSource(1))
	for step := 0; step < 200; step++ {
		next := *st
		g := *st.Gateway
		next.Gateway = &g
		switch rng.Intn(5) {
		case 0: // edit an HTTPRoute: drop its last rule
			if len(g.HTTPRoutes) > 0 {
				g.HTTPRoutes = slices.Clone(g.HTTPRoutes)
				i := rng.Intn(len(g.HTTPRoutes))
				r := g.HTTPRoutes[i].DeepCopy()
				if n := len(r.Spec.Rules); n > 0 {
					r.Spec.Rules = r.Spec.Rules[:n-1]
				}
				g.HTTPRoutes[i] = r
			}
		case 1: // delete a Service
			next.Services = maps.Clone(st.Services)
			for name := range next.Services {
				if rng.Intn(4) == 0 {
					delete(next.Services, name)
					break
				}
			}
		case 2: // change a Service's endpoints
			next.EndpointSlices = maps.Clone(st.EndpointSlices)
			for name, list := range next.EndpointSlices {
				s := *list[0]
				s.Ready = append(slices.Clone(s.Ready), fmt.Sprintf("10.9.%d.%d", step/250, step%250))
				next.EndpointSlices[name] = []*kube.EndpointSlice{&s}
				break
			}
		case 3: // drop a ReferenceGrant
			if len(g.ReferenceGrants) > 0 {
				g.ReferenceGrants = slices.Delete(slices.Clone(g.ReferenceGrants), 0, 1)
			}
		default: // edit a GRPCRoute or nothing at all
			if len(g.GRPCRoutes) > 0 && rng.Intn(2) == 0 {
				g.GRPCRoutes = slices.Clone(g.GRPCRoutes)
				r := g.GRPCRoutes[0].DeepCopy()
				r.Spec.Hostnames = append(r.Spec.Hostnames, gwapiv1.Hostname(fmt.Sprintf("g%d.example.com", step)))
				g.GRPCRoutes[0] = r
			} else {
				next.Gateway = st.Gateway
			}
		}
		st = &next
		sameAsFresh(t, b, b.Build(st), st)
		if t.Failed() {
			t.Fatalf("step %d", step)
		}
	}
}

// TestBuilderFollowsBackendTLS: a Route's routes are made again when
// what its backends' BackendTLSPolicies read changes (a CA ConfigMap
// gone, then a policy gone), never handed out as the last build made
// them: each build equals a fresh one.
func TestBuilderFollowsBackendTLS(t *testing.T) {
	st := loadCase(t, "testdata/backendtls.yaml")
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)

	withoutCA := *st
	withoutCA.ConfigMaps = maps.Clone(st.ConfigMaps)
	delete(withoutCA.ConfigMaps, types.NamespacedName{Namespace: "default", Name: "backend-ca"})
	second := b.Build(&withoutCA)
	if second == first {
		t.Fatal("a CA ConfigMap's removal gave the same IR")
	}
	sameAsFresh(t, b, second, &withoutCA)

	withoutPolicy := withoutCA
	g := *st.Gateway
	g.BackendTLSPolicies = slices.DeleteFunc(slices.Clone(g.BackendTLSPolicies), func(p *gwapiv1.BackendTLSPolicy) bool { return p.Name == "no-ca" })
	withoutPolicy.Gateway = &g
	sameAsFresh(t, b, b.Build(&withoutPolicy), &withoutPolicy)
}

// TestBuilderKeepsClientCertificates: a listener's client-certificate
// validation is the very same value after a change elsewhere, so that
// the renderer keeps its hosts' filter chains.
func TestBuilderKeepsClientCertificates(t *testing.T) {
	st := loadCase(t, "testdata/clientcert.yaml")
	b := gatewayapi.NewBuilder(goldenOptions)
	first := b.Build(st)
	next := *st
	next.Services = maps.Clone(st.Services) // a change the validations do not read
	second := b.Build(&next)
	if second == first {
		t.Fatal("a new Services map gave the same IR")
	}
	checked := 0
	for i, vh := range second.VirtualHosts {
		if vh.ClientCert == nil {
			continue
		}
		checked++
		if vh.ClientCert != first.VirtualHosts[i].ClientCert {
			t.Errorf("host %s: a new client-certificate validation though nothing it reads changed", vh.Host)
		}
	}
	if checked == 0 {
		t.Fatal("no host of the clientcert case validates clients")
	}
	sameAsFresh(t, b, second, &next)
}

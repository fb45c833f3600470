package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate"
)

// TestSnapshotterNameChangesMatchFresh publishes a random series of
// changes that add and remove clusters and load assignments (paths switched
// to Services no route used, paths added and removed), which shift every
// resource after them in their lists, and checks each snapshot against a
// fresh one: versions per type and per resource, the resources, the names
// the cache is told were updated and removed, and every name's position.
func TestSnapshotterNameChangesMatchFresh(t *testing.T) {
	const services, paths = 120, 40
	var manifests strings.Builder
	manifests.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: many, namespace: default}\nspec:\n  rules:\n  - host: many.example.com\n    http:\n      paths:\n")
	for i := 0; i < paths; i++ {
		fmt.Fprintf(&manifests, "      - {path: /s%d, pathType: Prefix, backend: {service: {name: s%03d, port: {number: 80}}}}\n", i, 3*i)
	}
	for i := 0; i < services; i++ {
		fmt.Fprintf(&manifests, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%03d, namespace: default}\nspec: {ports: [{port: 80}]}\n", i)
		fmt.Fprintf(&manifests, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s%03d-1, namespace: default, labels: {kubernetes.io/service-name: s%03d}}\naddressType: IPv4\nports: [{port: 8080}]\nendpoints: [{addresses: [10.0.%d.%d]}]\n", i, i, i/200, i%200+1)
	}
	st := manifestState(t, manifests.String())
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	s := newSnapshotter()
	rng := rand.New(rand.NewPCG(7, 11))
	var prev *Snapshot
	shifted := 0
	for step := 0; step < 60; step++ {
		if step > 0 {
			ing := st.Ingresses[0].DeepCopy()
			rule := &ing.Spec.Rules[0].HTTP.Paths
			for range 1 + rng.IntN(3) {
				switch op := rng.IntN(4); {
				case op < 2 && len(*rule) > 0: // switch a path to another Service
					(*rule)[rng.IntN(len(*rule))].Backend.Service.Name = fmt.Sprintf("s%03d", rng.IntN(services))
				case op == 2 && len(*rule) > 1: // remove a path
					j := rng.IntN(len(*rule))
					*rule = slices.Delete(*rule, j, j+1)
				default: // add one
					p := (*rule)[0]
					p.Path = fmt.Sprintf("/n%d", step)
					p.Backend.Service = p.Backend.Service.DeepCopy()
					p.Backend.Service.Name = fmt.Sprintf("s%03d", rng.IntN(services))
					*rule = append(*rule, p)
				}
			}
			st.Ingresses = []*networkingv1.Ingress{ing}
		}
		res, err := tr.Translate(st)
		if err != nil {
			t.Fatal(err)
		}
		before := s.prev[cache.GetResponseType(resource.ClusterType)]
		got, err := s.build(res.Resources)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want, err := NewSnapshot(res.Resources)
		if err != nil {
			t.Fatal(err)
		}
		if before.items != nil && len(before.names) != len(got.typeState(resource.ClusterType).names) {
			shifted++
		}
		sameAsFreshSnapshot(t, fmt.Sprintf("step %d", step), got, want)
		for _, typ := range comparedTypes {
			ts := got.typeState(typ)
			for j, name := range ts.names {
				if k, ok := ts.index.lookup(name); !ok || k != j {
					t.Fatalf("step %d, %s %q: at %d, looked up at %d (%t)", step, typ, name, j, k, ok)
				}
				if k, ok := ts.index.mapLookup(name); !ok || k != j {
					t.Fatalf("step %d, %s %q: at %d, found at %d (%t) in the map", step, typ, name, j, k, ok)
				}
			}
			if _, ok := ts.index.lookup("no-such-name"); ok {
				t.Fatalf("step %d, %s: a name that does not exist found", step, typ)
			}
			if prev == nil || prev.GetVersion(typ) == got.GetVersion(typ) {
				continue
			}
			// What the cache is told changed is what did.
			var updated, removed []string
			was, is := prev.GetVersionMap(typ), got.GetVersionMap(typ)
			for _, name := range ts.names {
				if was[name] != is[name] {
					updated = append(updated, name)
				}
			}
			for _, name := range prev.typeState(typ).names {
				if _, ok := is[name]; !ok {
					removed = append(removed, name)
				}
			}
			if !slices.Equal(sortedCopy(ts.updated), sortedCopy(updated)) || !slices.Equal(sortedCopy(ts.removed), sortedCopy(removed)) {
				t.Fatalf("step %d, %s: told updated %v removed %v, want %v and %v", step, typ, ts.updated, ts.removed, updated, removed)
			}
		}
		prev = got
	}
	if shifted < 20 {
		t.Fatalf("only %d of the steps changed the clusters' names", shifted)
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

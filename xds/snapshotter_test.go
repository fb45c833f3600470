package xds

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// TestSnapshotterReusesUnchangedTypes checks the incremental snapshotter
// against fresh snapshots: same versions, per type and per resource, and the
// previous indexes shared for types whose content did not change.
func TestSnapshotterReusesUnchangedTypes(t *testing.T) {
	st, err := kube.LoadState("../examples", kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	first, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	s := newSnapshotter()
	a, err := s.build(first.Resources)
	if err != nil {
		t.Fatal(err)
	}

	// Only endpoints change.
	var svc = st.Ingresses[0].Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name
	st.EndpointSlices = maps.Clone(st.EndpointSlices) // a changed part is a new map
	for key, slices := range st.EndpointSlices {
		if key.Name != svc {
			continue
		}
		s := *slices[0]
		s.Ready = append([]string{"127.0.0.2"}, s.Ready[1:]...)
		st.EndpointSlices[key] = append(slices[:0:0], &s)
	}
	b, fresh := buildBoth(t, tr, s, st)
	for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType} {
		if b.GetVersion(typ) != fresh.GetVersion(typ) || !reflect.DeepEqual(b.GetVersionMap(typ), fresh.GetVersionMap(typ)) {
			t.Errorf("%s: incremental versions differ from a fresh snapshot's", typ)
		}
		indexes := func(s *Snapshot) *nameIndexes { return s.typeState(typ).byName }
		changed := typ == resource.EndpointType
		if same := indexes(a) == indexes(b); same == changed {
			t.Errorf("%s: index shared = %v, want %v", typ, same, !changed)
		}
	}
	if a.GetVersion(resource.EndpointType) == b.GetVersion(resource.EndpointType) {
		t.Error("the endpoint version did not change")
	}
}

// TestSnapshotterIncrementalMatchesFresh changes a few of many endpoints at
// a time, so that the snapshotter takes its incremental path, and checks
// every snapshot against a fresh one.
func TestSnapshotterIncrementalMatchesFresh(t *testing.T) {
	var manifests strings.Builder
	manifests.WriteString("apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: many, namespace: default}\nspec:\n  rules:\n  - host: many.example.com\n    http:\n      paths:\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&manifests, "      - {path: /s%d, pathType: Prefix, backend: {service: {name: s%d, port: {number: 80}}}}\n", i, i)
	}
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&manifests, "---\napiVersion: v1\nkind: Service\nmetadata: {name: s%d, namespace: default}\nspec: {ports: [{port: 80}]}\n", i)
		fmt.Fprintf(&manifests, "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: s%d-1, namespace: default, labels: {kubernetes.io/service-name: s%d}}\naddressType: IPv4\nports: [{port: 8080}]\nendpoints: [{addresses: [10.0.0.%d]}]\n", i, i, i)
	}
	st := manifestState(t, manifests.String())
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	s := newSnapshotter()
	for step := 0; step < 10; step++ {
		if step > 0 {
			// Two Services' endpoints move, through the endpoint fast path.
			changed := map[types.NamespacedName][]*kube.EndpointSlice{}
			st.EndpointSlices = maps.Clone(st.EndpointSlices) // a changed part is a new map
			for _, i := range []int{step, step + 20} {
				key := types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("s%d", i)}
				slice := *st.EndpointSlices[key][0]
				slice.Ready = []string{fmt.Sprintf("10.1.%d.%d", step, i)}
				st.EndpointSlices[key] = []*kube.EndpointSlice{&slice}
				changed[key] = st.EndpointSlices[key]
			}
			if _, ok := tr.UpdateEndpoints(changed); !ok {
				t.Fatal("no fast path")
			}
		}
		res, err := tr.Translate(st)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.build(res.Resources)
		if err != nil {
			t.Fatal(err)
		}
		want, err := NewSnapshot(res.Resources)
		if err != nil {
			t.Fatal(err)
		}
		sameAsFreshSnapshot(t, fmt.Sprintf("step %d", step), got, want)
	}
}

// comparedTypes are the types the snapshotter tests compare.
var comparedTypes = []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType}

// sameAsFreshSnapshot checks an incremental snapshot against a fresh one of
// the same resources: the versions, per type and per resource, and the
// resources themselves.
func sameAsFreshSnapshot(t *testing.T, where string, got, want *Snapshot) {
	t.Helper()
	for _, typ := range comparedTypes {
		if got.GetVersion(typ) != want.GetVersion(typ) || !reflect.DeepEqual(got.GetVersionMap(typ), want.GetVersionMap(typ)) {
			t.Fatalf("%s, %s: incremental versions differ from a fresh snapshot's", where, typ)
		}
		g, w := got.GetResources(typ), want.GetResources(typ)
		if len(g) != len(w) {
			t.Fatalf("%s, %s: %d resources, want %d", where, typ, len(g), len(w))
		}
		for name, r := range w {
			if !proto.Equal(g[name], r) {
				t.Fatalf("%s, %s %q differs", where, typ, name)
			}
		}
	}
}

// TestSnapshotConsistency checks the snapshotter's consistency rule on
// resources that break it in each way, and that it agrees with
// go-control-plane's own check of the same resources.
func TestSnapshotConsistency(t *testing.T) {
	cases := map[string]struct {
		edit func(r *translate.Resources)
		ok   bool
	}{
		"consistent": {edit: func(*translate.Resources) {}, ok: true},
		"a cluster without its load assignment": {edit: func(r *translate.Resources) {
			r.Endpoints = r.Endpoints[1:]
		}},
		"a load assignment of no cluster": {edit: func(r *translate.Resources) {
			r.Clusters = r.Clusters[1:]
		}},
		"a cluster naming another load assignment": {edit: func(r *translate.Resources) {
			c := proto.Clone(r.Clusters[0]).(*clusterv3.Cluster)
			c.EdsClusterConfig.ServiceName = "elsewhere"
			r.Clusters[0] = c
		}},
		"a cluster naming its load assignment explicitly": {edit: func(r *translate.Resources) {
			c := proto.Clone(r.Clusters[0]).(*clusterv3.Cluster)
			c.EdsClusterConfig.ServiceName = c.Name
			r.Clusters[0] = c
		}, ok: true},
		"a route configuration no listener names": {edit: func(r *translate.Resources) {
			r.Routes = append(r.Routes, &routev3.RouteConfiguration{Name: "unnamed"})
		}},
		"a listener naming a missing route configuration": {edit: func(r *translate.Resources) {
			r.Routes = nil
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := testFixture().resources(t)
			c.edit(r)
			_, err := NewSnapshot(r)
			if (err == nil) != c.ok {
				t.Fatalf("NewSnapshot: %v, want ok=%v", err, c.ok)
			}
			theirs := &cache.Snapshot{}
			for _, tl := range typedResources(r) {
				theirs.Resources[cache.GetResponseType(tl.typeURL)] = cache.NewResources("v", tl.items())
			}
			if err := theirs.Consistent(); (err == nil) != c.ok {
				t.Fatalf("go-control-plane's Consistent: %v, want ok=%v", err, c.ok)
			}
		})
	}
}

// TestSnapshotterRouteChangesMatchFresh adds, removes and edits Ingresses
// (so virtual hosts come and go at random places in the route
// configuration) and checks each incremental snapshot's routes, version and
// bytes, against a fresh snapshot's.
func TestSnapshotterRouteChangesMatchFresh(t *testing.T) {
	ingress := func(i, variant int) *networkingv1.Ingress {
		prefix := networkingv1.PathTypePrefix
		return &networkingv1.Ingress{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("ing-%03d", i)},
			Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
				Host: fmt.Sprintf("h%03d.example.com", i),
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
					Path: fmt.Sprintf("/v%d", variant), PathType: &prefix,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "svc", Port: networkingv1.ServiceBackendPort{Number: 80}}},
				}}}},
			}}},
		}
	}
	st := kube.NewState()
	present := map[int]bool{}
	rebuild := func() {
		var list []*networkingv1.Ingress
		for _, ing := range st.Ingresses {
			if present[ingressIndex(ing)] {
				list = append(list, ing)
			}
		}
		st.Ingresses = list
	}
	for i := 0; i < 60; i += 2 {
		st.Ingresses = append(st.Ingresses, ingress(i, 0))
		present[i] = true
	}
	tr := translate.NewTranslator(translate.Options{HTTPPort: 8080})
	s := newSnapshotter()
	rng := rand.New(rand.NewPCG(3, 4))
	for step := 0; step < 200; step++ {
		if step > 0 {
			for e := 0; e < 1+rng.IntN(3); e++ {
				i := rng.IntN(60)
				switch {
				case !present[i]: // a new host, in sorted place
					present[i] = true
					st.Ingresses = append(slices.Clip(st.Ingresses), ingress(i, step))
					slices.SortFunc(st.Ingresses, func(a, b *networkingv1.Ingress) int { return strings.Compare(a.Name, b.Name) })
				case rng.IntN(2) == 0: // gone
					present[i] = false
					rebuild()
				default: // edited in place
					st.Ingresses = slices.Clone(st.Ingresses)
					for j, ing := range st.Ingresses {
						if ingressIndex(ing) == i {
							st.Ingresses[j] = ingress(i, step)
						}
					}
				}
			}
		}
		got, want := buildBoth(t, tr, s, st)
		if got.GetVersion(resource.RouteType) != want.GetVersion(resource.RouteType) {
			t.Fatalf("step %d: route version %s, want %s", step, got.GetVersion(resource.RouteType), want.GetVersion(resource.RouteType))
		}
		g, w := got.typeState(resource.RouteType), want.typeState(resource.RouteType)
		for j := range w.anys {
			if !bytes.Equal(g.anys[j].Value, w.anys[j].Value) {
				t.Fatalf("step %d: route configuration %s encoded differently", step, w.names[j])
			}
		}
	}
}

func ingressIndex(ing *networkingv1.Ingress) int {
	var i int
	fmt.Sscanf(ing.Name, "ing-%d", &i)
	return i
}

// buildBoth translates st and builds its snapshot twice: incrementally with
// s, and fresh.
func buildBoth(t *testing.T, tr *translate.Translator, s *snapshotter, st *kube.State) (incremental, fresh *Snapshot) {
	t.Helper()
	res, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	if incremental, err = s.build(res.Resources); err != nil {
		t.Fatal(err)
	}
	if fresh, err = NewSnapshot(res.Resources); err != nil {
		t.Fatal(err)
	}
	return incremental, fresh
}

// TestEDSClustersEncodeAsTheirClusters checks that the translator's EDS
// clusters, kept as names, are published as the Cluster each stands for
// (type URL and bytes) and count for the consistency rule like any EDS
// cluster, and that its encoded load assignments are published as those
// very bytes. It finds them by the interfaces the snapshotter uses, and
// checks what their contracts promise: the Cluster is named as the stand-in
// and is an EDS cluster fed by its namesake; the encoding is the
// deterministic encoding of a valid load assignment of the same name.
func TestEDSClustersEncodeAsTheirClusters(t *testing.T) {
	st, err := kube.LoadState("../examples", kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := translate.Translate(st, translate.Options{HTTPPort: 8080, HTTPSPort: 8443})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := newSnapshotter().build(res.Resources)
	if err != nil {
		t.Fatal(err)
	}
	clusters := snap.types[cache.GetResponseType(resource.ClusterType)]
	eds := 0
	for j, item := range clusters.items {
		c, ok := item.(clusterStandIn)
		if !ok {
			continue
		}
		eds++
		made := c.Cluster()
		if made.GetName() != c.GetName() || made.GetType() != clusterv3.Cluster_EDS || made.GetEdsClusterConfig().GetServiceName() != "" {
			t.Errorf("stand-in %s makes %v, want an EDS cluster of that name fed by its namesake", c.GetName(), made)
		}
		want, err := cache.MarshalResource(made)
		if err != nil {
			t.Fatal(err)
		}
		if got := clusters.anys[j]; got.TypeUrl != resource.ClusterType || !bytes.Equal(got.Value, want) {
			t.Errorf("cluster %s published as %s %x, want %s %x", c.GetName(), got.TypeUrl, got.Value, resource.ClusterType, want)
		}
		var decoded clusterv3.Cluster
		if err := proto.Unmarshal(clusters.anys[j].Value, &decoded); err != nil || decoded.GetName() != c.GetName() || decoded.GetType() != clusterv3.Cluster_EDS {
			t.Errorf("cluster %s decodes as %v (%v)", c.GetName(), &decoded, err)
		}
	}
	if eds == 0 {
		t.Fatal("the examples gave no EDS cluster kept as its name")
	}
	loads := snap.types[cache.GetResponseType(resource.EndpointType)]
	encoded := 0
	for j, item := range loads.items {
		la, ok := item.(encodedResource)
		if !ok {
			continue
		}
		encoded++
		var cla endpointv3.ClusterLoadAssignment
		if err := proto.Unmarshal(la.Encoding(), &cla); err != nil {
			t.Fatalf("load assignment %s: %v", cache.GetResourceName(la), err)
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(&cla)
		if err != nil || !bytes.Equal(again, la.Encoding()) || cla.GetClusterName() != cache.GetResourceName(la) || cla.ValidateAll() != nil {
			t.Errorf("load assignment %s: its encoding is not the deterministic encoding of a valid load assignment of that name (%v)", cache.GetResourceName(la), err)
		}
		got := loads.anys[j]
		if got.TypeUrl != resource.EndpointType || len(got.Value) == 0 || &got.Value[0] != &la.Encoding()[0] || len(got.Value) != len(la.Encoding()) {
			t.Errorf("load assignment %s is not published as the translator's encoding, shared", cache.GetResourceName(la))
		}
	}
	if encoded == 0 {
		t.Fatal("the examples gave no load assignment kept encoded")
	}

	// Without its load assignment, an EDS cluster breaks consistency.
	broken := *res.Resources
	broken.Endpoints = broken.Endpoints[1:]
	if _, err := newSnapshotter().build(&broken); err == nil || !strings.Contains(err.Error(), "inconsistent") {
		t.Errorf("an EDS cluster without its load assignment was published (%v)", err)
	}
}

// manifestState is the State of the objects in manifests, Ingresses
// without a class included.
func manifestState(t *testing.T, manifests string) *kube.State {
	t.Helper()
	st, err := kube.ManifestState(strings.NewReader(manifests), "test", kube.ClassFilter{WatchClassless: true}, kube.Refs{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

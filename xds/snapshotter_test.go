package xds

import (
	"reflect"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

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
	for key, slices := range st.EndpointSlices {
		if key.Name != svc {
			continue
		}
		s := slices[0].DeepCopy()
		s.Endpoints[0].Addresses = []string{"127.0.0.2"}
		st.EndpointSlices[key] = append(slices[:0:0], s)
	}
	second, err := tr.Translate(st)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.build(second.Resources)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := NewSnapshot(second.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{resource.ListenerType, resource.RouteType, resource.ClusterType, resource.EndpointType, resource.SecretType} {
		if b.GetVersion(typ) != fresh.GetVersion(typ) || !reflect.DeepEqual(b.GetVersionMap(typ), fresh.GetVersionMap(typ)) {
			t.Errorf("%s: incremental versions differ from a fresh snapshot's", typ)
		}
		items := func(s *cache.Snapshot) uintptr {
			return reflect.ValueOf(s.Resources[cache.GetResponseType(typ)].Items).Pointer()
		}
		changed := typ == resource.EndpointType
		if same := items(a) == items(b); same == changed {
			t.Errorf("%s: index shared = %v, want %v", typ, same, !changed)
		}
	}
	if a.GetVersion(resource.EndpointType) == b.GetVersion(resource.EndpointType) {
		t.Error("the endpoint version did not change")
	}
}

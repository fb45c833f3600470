package ingress_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// TestGoldenMirrorEnabled is the mirror case (translate/testdata/mirror.yaml)
// with --enable-external-name, which the golden options leave off; the
// renderer's golden test reads its IR (testdata/mirror-enabled.json) as it
// reads every case's, and the real Envoy validates what it renders.
func TestGoldenMirrorEnabled(t *testing.T) {
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "mirror.yaml"), kube.ClassFilter{WatchClassless: true}, kube.Refs{Ingress: ingress.References})
	if err != nil {
		t.Fatal(err)
	}
	opts := goldenOptions
	opts.EnableExternalName = true
	out := ingress.NewBuilder(opts).Build(st)
	if err := out.Validate(); err != nil {
		t.Errorf("the IR breaks its contract: %v", err)
	}
	got, err := envoy.IndentJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "mirror-enabled.json"), got)
}

// TestMirrorIncremental holds the builder's caches to mirror targets: after
// each change of the mirror keys (a target added, moved to another host,
// its body turned off, removed), the incremental IR is a fresh build's,
// and a mirror cluster no route uses is gone.
func TestMirrorIncremental(t *testing.T) {
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "mirror.yaml"), kube.ClassFilter{WatchClassless: true}, kube.Refs{Ingress: ingress.References})
	if err != nil {
		t.Fatal(err)
	}
	opts := goldenOptions
	opts.EnableExternalName = true
	b := ingress.NewBuilder(opts)
	const target = "nginx.ingress.kubernetes.io/mirror-target"
	steps := []struct {
		ingress, key, value string // value "": remove the key
	}{
		{"odd", target, "http://other.example.com/m"},
		{"shop", target, "https://test.example.com/shadow$request_uri"},
		{"literal", "nginx.ingress.kubernetes.io/mirror-request-body", ""},
		{"bare", target, ""},
		{"odd", target, ""},
		{"literal", target, "http://test.example.com"},
	}
	check := func(step string) {
		t.Helper()
		got, err := envoy.IndentJSON(b.Build(st))
		if err != nil {
			t.Fatal(err)
		}
		fresh := ingress.NewBuilder(opts).Build(st)
		if err := fresh.Validate(); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want, _ := envoy.IndentJSON(fresh)
		if string(got) != string(want) {
			t.Fatalf("%s: the incremental IR differs from a fresh build's:\n%s\nwant\n%s", step, got, want)
		}
	}
	check("first build")
	for _, s := range steps {
		i := slices.IndexFunc(st.Ingresses, func(ing *networkingv1.Ingress) bool { return ing.Name == s.ingress })
		ing := st.Ingresses[i].DeepCopy()
		if s.value == "" {
			delete(ing.Annotations, s.key)
		} else {
			ing.Annotations[s.key] = s.value
		}
		st.Ingresses = slices.Clone(st.Ingresses)
		st.Ingresses[i] = ing
		check(s.ingress + " " + s.key + "=" + s.value)
	}
	out := b.Build(st)
	for _, c := range out.Clusters {
		if c.Name == "mirror/http/test.example.com/80/be3d56e20b" {
			return // literal's new target: still used
		}
	}
	t.Errorf("no cluster for literal's last target among %v", out.Clusters)
}

// TestMirrorResolvedByAddress: when the control plane resolves names
// (Options.ResolveNames), a target is sent to at the addresses it checked
// (the endpoints of the Service standing for the name) and never by name;
// a refused or not yet resolved name is reported and not applied.
func TestMirrorResolvedByAddress(t *testing.T) {
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "mirror.yaml"), kube.ClassFilter{WatchClassless: true}, kube.Refs{Ingress: ingress.References})
	if err != nil {
		t.Fatal(err)
	}
	good, refused := kube.NameService("test.example.com"), kube.NameService("198.51.100.7")
	st.Services = maps.Clone(st.Services)
	st.Services[good] = &kube.Service{Name: good.Name, Type: corev1.ServiceTypeExternalName, ExternalName: good.Name, Resolved: &kube.Resolution{}}
	st.Services[refused] = &kube.Service{Name: refused.Name, Type: corev1.ServiceTypeExternalName, ExternalName: refused.Name, Resolved: &kube.Resolution{Refused: "resolves to an own address"}}
	st.EndpointSlices = maps.Clone(st.EndpointSlices)
	st.EndpointSlices[good] = []*kube.EndpointSlice{{Name: "test.example.com-externalname-IPv4", Service: good.Name, AddressType: "IPv4", Ready: []string{"203.0.113.5"}, AnyPort: true}}
	opts := goldenOptions
	opts.EnableExternalName, opts.ResolveNames = true, true
	out := ingress.NewBuilder(opts).Build(st)
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	var mirrors []string
	for _, b := range out.Backends {
		if strings.HasPrefix(b.Name, "mirror/") {
			mirrors = append(mirrors, b.Name)
			port := int32(80)
			if strings.HasPrefix(b.Name, "mirror/https/") {
				port = 443
			}
			if b.ExternalName != "" || len(b.Endpoints) != 1 || b.Endpoints[0].Address != "203.0.113.5" || b.Endpoints[0].Port != port {
				t.Errorf("backend %s: %+v, want the checked address on the target's port and no name", b.Name, b)
			}
		}
	}
	if want := []string{"mirror/http/test.example.com/80", "mirror/https/test.example.com/443"}; !slices.Equal(mirrors, want) {
		t.Errorf("mirror backends %v, want %v (none for the refused 198.51.100.7)", mirrors, want)
	}
	var reasons []string
	for _, p := range out.Problems {
		if p.Name == "literal" {
			reasons = append(reasons, p.Reason)
		}
	}
	if !slices.Equal(reasons, []string{"MirrorRefused"}) {
		t.Errorf("literal's problems %v, want MirrorRefused", reasons)
	}
	// Not resolved yet: nothing is sent until it is.
	delete(st.Services, good)
	st2 := *st
	out = ingress.NewBuilder(opts).Build(&st2)
	for _, b := range out.Backends {
		if strings.HasPrefix(b.Name, "mirror/") {
			t.Errorf("a mirror backend for a name not resolved yet: %s", b.Name)
		}
	}
}

package ingress_test

import (
	"path/filepath"
	"slices"
	"testing"

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
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "mirror.yaml"), kube.ClassFilter{WatchClassless: true}, ingress.References)
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
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "mirror.yaml"), kube.ClassFilter{WatchClassless: true}, ingress.References)
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

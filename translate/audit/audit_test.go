package audit

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// nginxClass is how the audit of an ingress-nginx cluster is run:
// `--controller-class k8s.io/ingress-nginx --ingress-class nginx`, with
// -f's class-less Ingresses counted in.
var nginxClass = kube.ClassFilter{ClassName: "nginx", ControllerName: "k8s.io/ingress-nginx", WatchClassless: true}

func load(t testing.TB, path string) *kube.State {
	t.Helper()
	st, err := kube.LoadStateWith(path, nginxClass, kube.Refs{Ingress: ingress.ReferencesWith(annotations.New(""))})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestGolden: each testdata/*.yaml audited, as text and as JSON
// (regenerated with -update, as `make golden` does).
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, input := range inputs {
		t.Run(filepath.Base(input), func(t *testing.T) {
			r := Run(load(t, input), ingress.Options{HTTPPort: 8080, HTTPSPort: 8443})
			// The notes are the registry's (TestNotesAreTheRegistrys),
			// which its groups reword: the goldens hold the verdicts.
			for _, ing := range r.Ingresses {
				for i := range ing.Annotations {
					if ing.Annotations[i].Note != "" {
						ing.Annotations[i].Note = "(the note of docs/annotations.md)"
					}
				}
			}
			base := strings.TrimSuffix(input, ".yaml")
			golden.Check(t, base+".txt", r.Text())
			out, err := r.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, base+".json", out)
		})
	}
}

// The audit says what the front-end decides, Ingress by Ingress: those
// it refuses are the ones not served, each with its reasons; the others
// of the class are served; another controller's are not listed.
func TestRefusalsAreTheFrontEnds(t *testing.T) {
	st := load(t, "testdata/nginx-cluster.yaml")
	opts := ingress.Options{HTTPPort: 8080, HTTPSPort: 8443}
	m := ingress.NewBuilder(opts).Build(st)
	refused := map[string]int{}
	for _, p := range m.Problems {
		if p.Reason == "AnnotationRefused" {
			refused[p.Namespace+"/"+p.Name]++
		}
	}
	if len(refused) == 0 {
		t.Fatal("the test's cluster has no refused Ingress")
	}
	r := Run(st, opts)
	if !r.Refused() || r.Summary.Refused != len(refused) {
		t.Errorf("Refused() = %v with %d refused, want %d", r.Refused(), r.Summary.Refused, len(refused))
	}
	var names []string
	for _, ing := range r.Ingresses {
		name := ing.Namespace + "/" + ing.Name
		names = append(names, name)
		if ing.Served == (refused[name] > 0) || len(ing.Refusals) != refused[name] {
			t.Errorf("%s: served %v with %d refusals; the front-end refuses it %d times", name, ing.Served, len(ing.Refusals), refused[name])
		}
	}
	if slices.Contains(names, "shop/not-ours") || !slices.Contains(names, "shop/verdicts") {
		t.Errorf("audited %v: want the class's Ingresses (the legacy annotation's included) and not another controller's", names)
	}

	// Served without the keys, nothing is refused: exit code 0.
	opts.IgnoreRefusals = true
	r = Run(st, opts)
	if r.Refused() {
		t.Error("with IgnoreRefusals, the audit still says some Ingress would be refused")
	}
	for _, ing := range r.Ingresses {
		if ing.Name == "snippet" && !slices.ContainsFunc(ing.Problems, func(p Problem) bool { return p.Reason == "AnnotationIgnored" }) {
			t.Errorf("snippet: no AnnotationIgnored problem with IgnoreRefusals: %v", ing.Problems)
		}
	}
}

// Each blog behaviour is found where the testdata's comments say, and
// nowhere else.
func TestBehavioursWhereTheyApply(t *testing.T) {
	r := Run(load(t, "testdata/nginx-cluster.yaml"), ingress.Options{HTTPPort: 8080, HTTPSPort: 8443})
	want := map[string][]string{
		"regex-match":     {RegexPrefix, HostWideRegex},
		"regex-neighbour": {HostWideRegex},
		"rewrite":         {RewriteRegex},
		"trailing-slash":  {TrailingSlash, TrailingSlash},
		"verdicts":        nil,
		"snippet":         nil,
		"basic-auth":      nil,
	}
	for _, ing := range r.Ingresses {
		var got []string
		for _, b := range ing.Behaviours {
			got = append(got, b.ID)
		}
		if !slices.Equal(got, want[ing.Name]) {
			t.Errorf("%s: behaviours %v, want %v", ing.Name, got, want[ing.Name])
		}
	}
	if len(r.EveryIngress) != 1 || r.EveryIngress[0].ID != URLNormalised {
		t.Errorf("every Ingress: %v, want URL normalisation", r.EveryIngress)
	}
	if !strings.Contains(r.ConfigMap, "not read") {
		t.Errorf("the ConfigMap note does not say it is not read: %q", r.ConfigMap)
	}
}

// Each annotation's verdict and note are the registry's for its key.
func TestNotesAreTheRegistrys(t *testing.T) {
	reg := annotations.New("")
	r := Run(load(t, "testdata/nginx-cluster.yaml"), ingress.Options{HTTPPort: 8080, HTTPSPort: 8443})
	notes := 0
	for _, ing := range r.Ingresses {
		for _, a := range ing.Annotations {
			want, ok := reg.VerdictOf(a.Key)
			if !ok || a.Verdict != want.Verdict || a.Note != want.Note {
				t.Errorf("%s/%s: %s is %q (%q), the registry says %q (%q)", ing.Namespace, ing.Name, a.Key, a.Verdict, a.Note, want.Verdict, want.Note)
			}
			if a.Note != "" {
				notes++
			}
		}
	}
	if notes == 0 {
		t.Error("no annotation has a note: the test's cluster shows none")
	}
}

// The JSON report round-trips and counts what it lists.
func TestJSONCounts(t *testing.T) {
	r := Run(load(t, "testdata/nginx-cluster.yaml"), ingress.Options{HTTPPort: 8080, HTTPSPort: 8443})
	out, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	total, listed := 0, 0
	for _, n := range back.Summary.Annotations {
		total += n
	}
	for _, ing := range back.Ingresses {
		listed += len(ing.Annotations)
	}
	if total != listed || listed == 0 || back.Summary.Ingresses != len(back.Ingresses) {
		t.Errorf("summary counts %d annotations and %d Ingresses; the report lists %d and %d", total, back.Summary.Ingresses, listed, len(back.Ingresses))
	}
}

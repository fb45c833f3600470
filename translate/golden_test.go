package translate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
	frontend "github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/xds"
)

// goldenOptions are the options every golden case is translated with.
// The controller ConfigMap they name is in configmap.yaml alone.
var goldenOptions = translate.Options{HTTPPort: 8080, HTTPSPort: 8443, EnableSSLPassthrough: true, AllowedResponseHeaders: []string{"X-Frame-Options", "X-Percent"},
	ConfigMap: types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}}

// goldenReferences are what each Ingress refers to, with goldenOptions.
var goldenReferences = frontend.WithConfigMap(frontend.References, goldenOptions.ConfigMap)

// goldenCases lists testdata/*.yaml: each is one case, its expected output
// beside it as .json (the output of `ingress-xds translate -f`). The same
// inputs are the cases of the front-end's golden files (YAML to IR, in
// translate/ingress) and, through those, of the renderer's (IR to Envoy, in
// translate/envoy).
func goldenCases(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden cases in testdata/")
	}
	return inputs
}

// translateFile runs a case as `ingress-xds translate -f` does.
func translateFile(t *testing.T, input string) *translate.Result {
	t.Helper()
	st, err := kube.LoadStateWith(input, kube.ClassFilter{WatchClassless: true}, goldenReferences)
	if err != nil {
		t.Fatalf("loading %s: %v", input, err)
	}
	res, err := translate.Translate(st, goldenOptions)
	if err != nil {
		t.Fatalf("translating %s: %v", input, err)
	}
	return res
}

func TestGolden(t *testing.T) {
	for _, input := range goldenCases(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			res := translateFile(t, input)
			got, err := translate.RenderJSON(res)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(input, ".yaml")+".json", got)
			if err := res.IR().Validate(); err != nil {
				t.Errorf("the IR breaks its contract: %v", err)
			}
			// Every golden output must be publishable as it is.
			if err := xds.Validate(res.Resources); err != nil {
				t.Errorf("resources fail validation: %v", err)
			}
			if _, err := xds.NewSnapshot(res.Resources); err != nil {
				t.Errorf("resources do not make a consistent snapshot: %v", err)
			}
		})
	}
}

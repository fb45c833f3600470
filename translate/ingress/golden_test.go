package ingress_test

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// goldenOptions are the options every golden case is built with, as the
// translator's own golden cases are.
// The controller ConfigMap they name is in configmap.yaml alone.
var goldenOptions = ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, EnableSSLPassthrough: true, AllowedResponseHeaders: []string{"X-Frame-Options", "X-Percent"},
	ConfigMap: types.NamespacedName{Namespace: "ingress-nginx", Name: "ingress-nginx-controller"}}

// TestGoldenIR is the front-end's seam: each Kubernetes case of
// translate/testdata (one per feature) and the IR it becomes, in
// testdata/<case>.json, which the renderer's golden test reads in turn.
func TestGoldenIR(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("..", "testdata", "*.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no cases in ../testdata: %v", err)
	}
	for _, input := range inputs {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			st, err := kube.LoadStateWith(input, kube.ClassFilter{WatchClassless: true}, ingress.WithConfigMap(ingress.References, goldenOptions.ConfigMap))
			if err != nil {
				t.Fatal(err)
			}
			out := ingress.NewBuilder(goldenOptions).Build(st)
			if err := out.Validate(); err != nil {
				t.Errorf("the IR breaks its contract: %v", err)
			}
			got, err := envoy.IndentJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".json"), got)
		})
	}
}

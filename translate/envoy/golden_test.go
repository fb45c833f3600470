package envoy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/envoytest"
	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// goldenIRs lists the renderer's cases: the front-end's golden IRs (one
// per Kubernetes feature) and the IRs written here for what no front-end
// produces yet (testdata/*.ir.json).
func goldenIRs(t *testing.T) map[string]string {
	t.Helper()
	cases := map[string]string{}
	front, err := filepath.Glob(filepath.Join("..", "ingress", "testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range front {
		cases[strings.TrimSuffix(filepath.Base(p), ".json")] = p
	}
	own, err := filepath.Glob(filepath.Join("testdata", "*.ir.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range own {
		cases[strings.TrimSuffix(filepath.Base(p), ".ir.json")] = p
	}
	if len(cases) == 0 {
		t.Fatal("no golden IRs")
	}
	return cases
}

func readIR(t *testing.T, path string) *ir.IR {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m ir.IR
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("%s breaks the IR's contract: %v", path, err)
	}
	return &m
}

// TestGoldenEnvoy is the renderer's seam: each IR and the resources it
// renders to, one file per resource type (testdata/<case>/<type>.json),
// each set publishable and accepted by the real Envoy.
func TestGoldenEnvoy(t *testing.T) {
	var bin string
	if !testing.Short() {
		bin = envoytest.Binary(t)
	}
	for name, path := range goldenIRs(t) {
		t.Run(name, func(t *testing.T) {
			res, err := envoy.NewRenderer().Render(readIR(t, path))
			if err != nil {
				t.Fatal(err)
			}
			byType, err := envoy.JSONByType(res)
			if err != nil {
				t.Fatal(err)
			}
			for typ, list := range byType {
				got, err := envoy.IndentJSON(list)
				if err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", name, typ+".json"), got)
			}
			if err := xds.Validate(res); err != nil {
				t.Errorf("resources fail validation: %v", err)
			}
			if _, err := xds.NewSnapshot(res); err != nil {
				t.Errorf("resources do not make a consistent snapshot: %v", err)
			}
			if bin != "" {
				envoytest.Validate(t, bin, res)
			}
		})
	}
}

package gatewayapi_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/envoytest"
	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
	"github.com/ingress-xds/ingress-xds/xds"
)

// goldenOptions are the options every golden case is built with: Envoy's
// ports are those of the Ingress front-end's golden cases, published on
// 80 and 443 as deploy/ does.
var goldenOptions = gatewayapi.Options{HTTPPort: 8080, HTTPSPort: 8443, PublishedHTTPPort: 80, PublishedHTTPSPort: 443}

// goldenCases lists testdata/*.yaml: each is one case (one feature), its
// IR beside it as <case>.json and the Envoy resources it renders to as
// <case>.envoy.json.
func goldenCases(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden cases in testdata/: %v", err)
	}
	return inputs
}

// build runs the front-end on a case as the file source reads it.
func build(t *testing.T, input string) *ir.IR {
	t.Helper()
	m, _ := buildWithStatus(t, input)
	return m
}

func buildWithStatus(t *testing.T, input string) (*ir.IR, *gatewayapi.Status) {
	t.Helper()
	return gatewayapi.BuildWithStatus(loadCase(t, input), caseOptions(input))
}

// caseOptions are a case's options: goldenOptions, with own addresses
// for a case whose name starts with own-.
func caseOptions(input string) gatewayapi.Options {
	o := goldenOptions
	o.OwnAddresses = strings.HasPrefix(filepath.Base(input), "own-")
	return o
}

// loadCase is a case's State, as the file source reads it.
func loadCase(t *testing.T, input string) *kube.State {
	t.Helper()
	st, err := kube.LoadState(input, kube.ClassFilter{WatchClassless: true})
	if err != nil {
		t.Fatalf("loading %s: %v", input, err)
	}
	return st
}

func render(t *testing.T, m *ir.IR) *envoy.Resources {
	t.Helper()
	res, err := envoy.NewRenderer().Render(m)
	if err != nil {
		t.Fatalf("rendering: %v", err)
	}
	return res
}

// TestGolden is both seams for Gateway API: the YAML's IR, which must keep
// the IR's contract, and the Envoy resources the same renderer as the
// Ingresses' makes of it, which must be publishable; and the objects'
// status (<case>.status.json).
func TestGolden(t *testing.T) {
	for _, input := range goldenCases(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			m, status := buildWithStatus(t, input)
			st, err := envoy.IndentJSON(status)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".status.json"), st)
			if err := m.Validate(); err != nil {
				t.Errorf("the IR breaks its contract: %v", err)
			}
			got, err := envoy.IndentJSON(m)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".json"), got)

			res := render(t, m)
			out, err := envoy.RenderJSON(res, m.Problems)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".envoy.json"), out)
			if err := xds.Validate(res); err != nil {
				t.Errorf("resources fail validation: %v", err)
			}
			if _, err := xds.NewSnapshot(res); err != nil {
				t.Errorf("resources do not make a consistent snapshot: %v", err)
			}
		})
	}
}

// TestGoldenEnvoyValidates makes the real Envoy the judge of every case.
func TestGoldenEnvoyValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the real Envoy")
	}
	bin := envoytest.Binary(t)
	for _, input := range goldenCases(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			envoytest.Validate(t, bin, render(t, build(t, input)))
		})
	}
}

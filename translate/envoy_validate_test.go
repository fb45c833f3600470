package translate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/envoytest"
)

// TestGoldenEnvoyValidates makes the real Envoy the judge of every golden
// case: each translation is checked with `envoy --mode validate`.
func TestGoldenEnvoyValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the real Envoy")
	}
	envoy := envoytest.Binary(t)
	for _, input := range goldenCases(t) {
		name := strings.TrimSuffix(filepath.Base(input), ".yaml")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			envoytest.Validate(t, envoy, translateFile(t, input).Resources)
		})
	}
}

package gatewayapi

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// The features our GatewayClasses' status lists are those the
// conformance suite's options claim, in each mode: options.yaml on the
// shared ports, options-own.yaml with an address per Gateway
// (e2e/gatewayconformance, whose report docs/gateway-api.md carries).
func TestSupportedFeaturesAreTheConformanceClaim(t *testing.T) {
	for file, own := range map[string]bool{"options.yaml": false, "options-own.yaml": true} {
		raw, err := os.ReadFile("../../e2e/gatewayconformance/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var options struct {
			SupportedFeatures []string `json:"supportedFeatures"`
		}
		if err := yaml.Unmarshal(raw, &options); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		slices.Sort(options.SupportedFeatures)
		var got []string
		for _, f := range SupportedFeatures(own) {
			got = append(got, string(f.Name))
		}
		if !slices.Equal(got, options.SupportedFeatures) {
			t.Errorf("SupportedFeatures(%v)\n  %v\n%s claims\n  %v", own, got, file, options.SupportedFeatures)
		}
		if !slices.IsSorted(got) {
			t.Errorf("SupportedFeatures(%v) is not sorted by name: %v", own, got)
		}
	}
}

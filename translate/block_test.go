package translate_test

import (
	"math/rand"
	"testing"
)

// toggledBlockKey is a block-user-agents or block-referers value for the
// random incremental test: strings, expressions, an empty Referer, none,
// and one RE2 cannot take (every Ingress refused).
func toggledBlockKey(rng *rand.Rand) (string, string) {
	keys := []string{"block-user-agents", "block-referers"}
	values := []string{"", "AlphaBot", `~*bot\d+, curl`, `"", qwerty`, `~(?<=x)y`, "default"}
	return keys[rng.Intn(len(keys))], values[rng.Intn(len(values))]
}

// The listeners carry the ConfigMap's block, the same value while the
// ConfigMap does not change, and none without it.
func TestBlockOnEveryListener(t *testing.T) {
	rule := simpleRule("bad.example.com", "/", "Prefix", "bad", "{number: 80}")
	res := translateManifests(t, badService+ingress("open", rule)+controllerConfigMap(`block-user-agents: "AlphaBot, ~*curl"`))
	m := res.IR()
	if len(m.Listeners) == 0 {
		t.Fatal("no listener")
	}
	for _, l := range m.Listeners {
		if l.Block == nil || len(l.Block.Headers) != 1 || l.Block.Headers[0].Header != "user-agent" {
			t.Errorf("listener %s: block %+v", l.Name, l.Block)
		}
	}
	res = translateManifests(t, badService+ingress("open", rule))
	for _, l := range res.IR().Listeners {
		if l.Block != nil {
			t.Errorf("listener %s without the ConfigMap: block %+v", l.Name, l.Block)
		}
	}
}

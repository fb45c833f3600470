package xds

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNameIndexFindsEveryName checks lookups on lists in order, with a
// short unordered tail (kept clusters after the translator's), and out of
// order altogether, one by one and in bulk.
func TestNameIndexFindsEveryName(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	sorted := make([]string, 3000)
	for i := range sorted {
		sorted[i] = fmt.Sprintf("default/svc-%05d/80", i*2)
	}
	shuffled := slices.Clone(sorted)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	lists := map[string][]string{
		"sorted":             sorted,
		"sorted, short tail": append(slices.Clone(sorted[:2990]), "default/svc-00001/80", "a", "zz"),
		"sorted, long tail":  append(slices.Clone(sorted[:2000]), shuffled[:maxTail+1]...),
		"shuffled":           shuffled,
		"empty":              nil,
	}
	for name, names := range lists {
		t.Run(name, func(t *testing.T) {
			x := newNameIndex(names)
			first := map[string]int{}
			for j, n := range names {
				if _, ok := first[n]; !ok {
					first[n] = j
				}
			}
			for _, lookup := range []func(string) (int, bool){x.lookup, x.bulk(bulkLookups), func(n string) (int, bool) { return x.near(n, rng.IntN(len(names)+1)) }} {
				for n := range first {
					j, ok := lookup(n)
					if !ok || names[j] != n {
						t.Fatalf("%q: got %d, %t", n, j, ok)
					}
				}
				for _, missing := range []string{"", "default/svc-00003/80", "zzz", "default/svc-99999/80"} {
					if _, ok := lookup(missing); ok {
						t.Fatalf("%q found", missing)
					}
				}
			}
		})
	}
}

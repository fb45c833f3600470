package listdiff

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWalkAccountsForEveryElement edits random lists of distinct values in
// random ways and checks that Walk's account of the edit is true (every
// element accounted for once, pairs equal, and prev minus removed plus added
// is next) and, for a few clustered edits, minimal.
func TestWalkAccountsForEveryElement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	next := 1000
	for round := 0; round < 2000; round++ {
		prev := make([]int, rng.IntN(60))
		for j := range prev {
			prev[j] = next
			next++
		}
		cur := slices.Clone(prev)
		edits := rng.IntN(4)
		if round%10 == 0 {
			edits = 40 // far too many for a small account
			rng.Shuffle(len(cur), func(a, b int) { cur[a], cur[b] = cur[b], cur[a] })
		}
		changed := 0
		for e := 0; e < edits; e++ {
			run := 1 + rng.IntN(3)
			at := rng.IntN(len(cur) + 1)
			switch rng.IntN(3) {
			case 0: // a run added
				for r := 0; r < run; r++ {
					cur = slices.Insert(cur, at, next)
					next++
				}
				changed += run
			case 1: // a run removed
				end := min(at+run, len(cur))
				changed += end - at
				cur = slices.Delete(cur, at, end)
			default: // one replaced
				if at < len(cur) {
					cur[at] = next
					next++
					changed += 2
				}
			}
		}
		seenNext := make([]int, len(cur))
		seenPrev := make([]int, len(prev))
		var kept []int
		var gotAdded []int
		removedCount, addedCount := 0, 0
		lastK := -1
		Walk(prev, cur,
			func(i, k int) {
				seenNext[i]++
				seenPrev[k]++
				if cur[i] != prev[k] {
					t.Fatalf("round %d: paired %d with %d", round, cur[i], prev[k])
				}
				if k <= lastK {
					t.Fatalf("round %d: pairs out of order", round)
				}
				lastK = k
				kept = append(kept, prev[k])
			},
			func(i int) { seenNext[i]++; addedCount++; gotAdded = append(gotAdded, cur[i]) },
			func(k int) { seenPrev[k]++; removedCount++ })
		for i, n := range seenNext {
			if n != 1 {
				t.Fatalf("round %d: next[%d] accounted for %d times", round, i, n)
			}
		}
		for k, n := range seenPrev {
			if n != 1 {
				t.Fatalf("round %d: prev[%d] accounted for %d times", round, k, n)
			}
		}
		whole := append(slices.Clone(kept), gotAdded...)
		slices.Sort(whole)
		want := slices.Clone(cur)
		slices.Sort(want)
		if !slices.Equal(whole, want) {
			t.Fatalf("round %d: kept plus added is not next", round)
		}
		if edits == 1 && addedCount+removedCount > changed {
			t.Fatalf("round %d: %d added and %d removed for %d changed elements", round, addedCount, removedCount, changed)
		}
	}
}

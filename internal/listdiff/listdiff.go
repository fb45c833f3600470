// Package listdiff tells what changed between two versions of a long list
// whose unchanged elements are the very same values (pointers to objects
// never modified in place), without looking into any element: the
// translator's and the snapshotter's lists at 10,000 Ingresses hold 20,000
// virtual hosts, of which a change touches one or two.
package listdiff

// window is how far past a mismatch Walk looks for the lists to agree
// again: a run of up to this many elements added or removed together is
// recognised as such.
const window = 16

// Walk pairs the elements of next with those of prev, in order, by
// equality. It calls same(i, k) when next[i] is prev[k], added(i) for an
// element of next left unpaired and removed(k) for one of prev. Each element
// gets exactly one call, so the calls are always a true account of the
// change; when next is prev with a few runs of elements added, removed or
// replaced, they are also the smallest one. The cost is a comparison per
// element, and a few more per change.
func Walk[T comparable](prev, next []T, same func(i, k int), added func(i int), removed func(k int)) {
	i, k := 0, 0
	for i < len(next) && k < len(prev) {
		if next[i] == prev[k] {
			same(i, k)
			i, k = i+1, k+1
			continue
		}
		if d := index(prev[k+1:], next[i]); d >= 0 { // prev[k..k+d] removed
			for j := k; j <= k+d; j++ {
				removed(j)
			}
			k += d + 1
			continue
		}
		if d := index(next[i+1:], prev[k]); d >= 0 { // next[i..i+d] added
			for j := i; j <= i+d; j++ {
				added(j)
			}
			i += d + 1
			continue
		}
		added(i) // one in place of the other
		removed(k)
		i, k = i+1, k+1
	}
	for ; i < len(next); i++ {
		added(i)
	}
	for ; k < len(prev); k++ {
		removed(k)
	}
}

// index returns the position of v among the first window elements of s,
// or -1.
func index[T comparable](s []T, v T) int {
	for j := 0; j < len(s) && j < window; j++ {
		if s[j] == v {
			return j
		}
	}
	return -1
}

package xds

import (
	"sort"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// nameIndex finds a resource's position in a published list by name. It is
// built for every change of a type's names: at 10,000 Ingresses, one cluster
// added (a path switched to a new Service) changes the names of 100,000
// clusters and 100,000 load assignments, and a map of every name, built
// again for each such change, cost more than the rest of the publish. The
// translator lists clusters and load assignments in name order (kept
// clusters, breakaftermake.go, follow them), so the index is that order: a
// binary search of the sorted part, a look at the few names after it, and a
// map only when the list is not in order or when a client looks up many
// names at once (bulk), built once and shared by every state with the same
// names.
type nameIndex struct {
	names []string
	// sorted is the length of the longest prefix of names in strictly
	// increasing order; the names after it (tail) are few, or the map is
	// used.
	sorted int
	once   sync.Once
	byName map[string]int
	// orders are the encodings of requests' names found to name each of
	// names once (requestnames.go).
	orders *eachOnceOrders
	// sized is encoded's: a request naming each name once, on the wire.
	sized   sync.Once
	encoded int64
}

// maxTail bounds the names past the sorted prefix looked at one by one.
const maxTail = 64

// bulkLookups is how many lookups at once make it worth building the map.
const bulkLookups = 1024

func newNameIndex(names []string) *nameIndex {
	n := 0
	for n < len(names) && (n == 0 || names[n-1] < names[n]) {
		n++
	}
	return &nameIndex{names: names, sorted: n, orders: newEachOnceOrders()}
}

// lookup returns name's position.
func (x *nameIndex) lookup(name string) (int, bool) {
	if x == nil {
		return 0, false
	}
	if len(x.names)-x.sorted > maxTail {
		return x.mapLookup(name)
	}
	if j := sort.SearchStrings(x.names[:x.sorted], name); j < x.sorted && x.names[j] == name {
		return j, true
	}
	for j := x.sorted; j < len(x.names); j++ {
		if x.names[j] == name {
			return j, true
		}
	}
	return 0, false
}

// near is lookup for a name expected at hint or just after it: walking
// names in list order (the consistency check) costs a comparison each.
func (x *nameIndex) near(name string, hint int) (int, bool) {
	if x != nil {
		for j := hint; j < hint+2 && j >= 0 && j < len(x.names); j++ {
			if x.names[j] == name {
				return j, true
			}
		}
	}
	return x.lookup(name)
}

// bulk returns the lookup to use for n names at once: the map, built on
// the first such call, when n is large.
func (x *nameIndex) bulk(n int) func(string) (int, bool) {
	if x != nil && n >= bulkLookups {
		return x.mapLookup
	}
	return x.lookup
}

func (x *nameIndex) mapLookup(name string) (int, bool) {
	j, ok := x.nameMap()[name]
	return j, ok
}

// nameMap is every name's position, built on first use; read it only.
func (x *nameIndex) nameMap() map[string]int {
	x.once.Do(func() {
		x.byName = make(map[string]int, len(x.names))
		for j, n := range x.names {
			x.byName[n] = j
		}
	})
	return x.byName
}

// encodedSize is how many bytes a request naming each of the names once
// takes on the wire (admission.go weighs a SotW stream by it).
func (x *nameIndex) encodedSize() int64 {
	if x == nil {
		return 0
	}
	x.sized.Do(func() {
		for _, n := range x.names {
			x.encoded += int64(protowire.SizeTag(requestNamesField) + protowire.SizeBytes(len(n)))
		}
	})
	return x.encoded
}

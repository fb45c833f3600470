package xds

import (
	"reflect"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// What a SotW Envoy holds of its load assignments, kept small.
//
// The SotW server keeps, per stream and type, the map of
// the resources the client holds with their versions that the cache
// returned with the last response sent (assumption 6). A SotW Envoy names
// every load assignment, so for each SotW Envoy that map named every load
// assignment: 10,000 at 1,000 Ingresses, most of what a SotW client cost
// the control plane (docs/benchmarks.md, "Issue 31: what a SotW client
// costs"). Yet a response that sends a client every resource of a content
// it lacks, when its request names exactly that content's resources,
// leaves it holding all of them at that content's versions: one record
// can say that.
//
// So such a response returns a map of its own, empty, and the stream
// keeps a record of it (sotwCompact): the map, by identity, and the
// content it stands for. The server's map is then either that map, and
// the client holds the content but for the names the map gives (written
// by later responses that send some, sharededs.go), or another, read as
// it is. Names are read through both (held.version). Before each request's
// watch the server drops from its map what the request no longer names
// (assumption 13); the record stands only while the request names
// exactly the content's names, and otherwise is made the map the server
// would have kept (expand) and dropped. What compares every name held
// against a content with other names expands it too.
//
// That a request names exactly a content's resources is known without
// looking at them: the codec gives such a request the content's own list
// of names (requestnames.go), so the lists are the same list.

// sotwCompact is a record of a map a SotW response returned: a client
// whose subscription's map is m holds every resource of all, at all's
// versions, but the names m gives, at m's.
type sotwCompact struct {
	m   map[string]string
	all *heldContent
}

// sameList says whether a and b are one list: the same length from the
// same array.
func sameList(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sameMap says whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sotwHeldIn is what a SotW client whose subscription's map is m holds
// of the content key: m, and the content m stands for if it is the map
// of a record of the stream's.
func sotwHeldIn(s *streamState, key string, m map[string]string) held {
	h := heldIn(m)
	if s == nil {
		return h
	}
	for _, rec := range s.sotwCompact[key] {
		if sameMap(rec.m, m) {
			h.all = rec.all
			break
		}
	}
	return h
}

// heldOf is what a watch's client holds.
func heldOf(w *watch) held {
	if w.isDelta() {
		return heldBy(w) // heldall.go
	}
	return sotwHeldIn(w.stream, w.key, w.sub.ReturnedResources())
}

// openSotw does, for a SotW request's watch, what the server did to its
// map: the records of responses the server dropped are forgotten (it
// sends or drops a response before it takes the next request of the
// type, assumption 7), and a record whose client no longer names exactly
// its content's names is expanded. It notes whether the request names
// exactly the resources of the current content, or of the one the map
// stands for (watch.namedList): only then is the list kept, which is
// then that content's own and costs nothing.
func (c *resourceCache) openSotw(w *watch, req *cache.Request) {
	names := req.GetResourceNames()
	if ts := c.types[w.key]; ts != nil && len(names) > 0 && sameList(names, ts.names) {
		w.namedList = names
		indexBy(w.sub, ts.index)
	}
	s := w.stream
	if s == nil || len(s.sotwCompact[w.key]) == 0 {
		return
	}
	m := w.sub.ReturnedResources()
	h := sotwHeldIn(s, w.key, m)
	delete(s.sotwCompact, w.key)
	if h.all == nil {
		return
	}
	if !sameList(names, h.all.names) || w.sub.IsWildcard() {
		expandSotw(h, w.sub)
		return
	}
	w.namedList = names
	indexBy(w.sub, h.all.index)
	s.sotwCompact[w.key] = []*sotwCompact{{m: m, all: h.all}}
}

// expandSotw fills a record's map with what it stands for of the names
// sub subscribes to: the map the server would have kept.
func expandSotw(h held, sub cache.Subscription) {
	for j, name := range h.all.names {
		if _, ok := h.m[name]; ok {
			continue
		}
		if subscribes(sub, name) {
			h.m[name] = h.all.hashes[j]
		}
	}
}

// expandHeldSotw expands the record of a SotW watch's map, if it has one,
// for what compares every name held, and returns the map read as it is.
func expandHeldSotw(w *watch, h held) held {
	if h.all == nil {
		return h
	}
	expandSotw(h, w.sub)
	if w.stream != nil {
		delete(w.stream.sotwCompact, w.key)
	}
	return heldIn(h.m)
}

// leavesAll says whether a SotW answer to w that sends every resource of
// ts the client lacks leaves it holding all of them: its request names
// exactly ts's resources, none of which comes on demand.
func leavesAll(w *watch, ts *typeSnapshot) bool {
	return w.stream != nil && len(w.namedList) > 0 && sameList(w.namedList, ts.names) && ts.lazy == nil && !ts.namespaced
}

// compactInPlace makes the map of a SotW client that lacks nothing of ts
// stand for ts, when its request names exactly ts's resources: emptied,
// and recorded. The server does not touch the map while the cache opens
// a watch (assumption 3), and it keeps the map, not a copy (assumption
// 6). A client up to date when its names change (its map expanded by
// openSotw) is so made compact again without a response.
func compactInPlace(w *watch, h held, ts *typeSnapshot) {
	if h.m == nil || !leavesAll(w, ts) || h.all != nil && h.all.version == ts.version && len(h.m) == 0 {
		return
	}
	clear(h.m)
	if w.stream.sotwCompact == nil {
		w.stream.sotwCompact = map[string][]*sotwCompact{}
	}
	w.stream.sotwCompact[w.key] = []*sotwCompact{{m: h.m, all: heldContentOf(ts)}}
}

// noteSotwHeld records, as a SotW answer is delivered, the map it will
// return and the content that map stands for.
func noteSotwHeld(w *watch, r *sotwResponse) {
	if r.compact == nil || w.stream == nil {
		return
	}
	if w.stream.sotwCompact == nil {
		w.stream.sotwCompact = map[string][]*sotwCompact{}
	}
	w.stream.sotwCompact[w.key] = append(w.stream.sotwCompact[w.key], r.compact)
}

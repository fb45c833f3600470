package xds

// What a delta Envoy holds of its virtual hosts, kept small.
//
// go-control-plane's delta server keeps, per stream and type, a map of
// every resource the client holds with its version (the subscription's
// ReturnedResources), which the cache fills as each response is sent
// (deltaResponse.GetNextVersionMap). Envoy's VHDS subscription is a
// wildcard, so for each delta Envoy taking its virtual hosts over VHDS
// that map names every virtual host: with 2,000 Envoys it was most of the
// control plane's heap (docs/benchmarks.md, "Issue 31: the held state of
// a VHDS stream"). Yet every answer to a wildcard subscription leaves its
// client holding exactly every virtual host of the answer's version: the
// answer sends what the client lacks of that version and removes what it
// holds that is gone (deltaDiff), or what changed since the version the
// client held whole (deltaSince, deltaChanges). One entry can say that.
//
// So once such an answer is sent, the map is only that entry (allHeld,
// beside syncedAt) and whatever the server writes into it later (a name
// unsubscribed from, held at no version), and the stream keeps the
// content of that version (heldContent): its names, versions and index,
// which a newer content with the same names shares, and which the
// streams at that version all point to. A name's version is read through
// both (held.version). The short ways (deltaSince, deltaChanges) only look
// names up; what goes through every name the client holds (a comparison
// of everything, deltaDiff; the VHDS part forgetting a namespace) fills
// the map from the content first (expandHeld).
//
// Only the namespaced type (VHDS) is kept so: the other wildcard types
// are few resources (listeners) or come on demand (clusters), and the
// parts that read a map of load assignments or clusters
// (makebeforebreak.go, sharededs.go) read it as it is.

// allHeld is the map entry saying its client holds every resource of the
// version it gives: the stream's heldContent of its type. No resource
// name starts with a NUL.
const allHeld = "\x00all-held"

// heldContent is the part of a content a compact map stands for.
type heldContent struct {
	version       string
	names, hashes []string
	index         *nameIndex
}

func heldContentOf(ts *typeSnapshot) *heldContent {
	return &heldContent{version: ts.version, names: ts.names, hashes: ts.hashes, index: ts.index}
}

// held is what a client holds of a type, as the cache reads it: the map
// the server keeps (m), and, when that map is compact, the content it
// stands for (all).
type held struct {
	m   map[string]string
	all *heldContent
}

// heldIn is a map read as it is.
func heldIn(m map[string]string) held { return held{m: m} }

// version is the version of name the client holds, if it holds it: the
// map's entry, else the content's.
func (h held) version(name string) (string, bool) {
	if v, ok := h.m[name]; ok {
		return v, true
	}
	if h.all != nil {
		if j, ok := h.all.index.lookup(name); ok {
			return h.all.hashes[j], true
		}
	}
	return "", false
}

// compactable says whether a delta watch's answer from ts leaves a map
// that can be compact: a bound stream's wildcard subscription to the
// namespaced type.
func compactable(w *watch, ts *typeSnapshot) bool {
	return w.isDelta() && w.stream != nil && ts.namespaced && w.sub.IsWildcard() && ts.lazy == nil
}

// heldBy is what a watch's client holds. A compact map without its
// content (which the cache keeps as long as the map) would read as
// holding nothing, and the client be sent everything again.
func heldBy(w *watch) held {
	m := w.sub.ReturnedResources()
	h := heldIn(m)
	if v, ok := m[allHeld]; ok && w.stream != nil {
		if all := w.stream.allHeld[w.key]; all != nil && all.version == v {
			h.all = all
		}
	}
	return h
}

// expandHeld fills a watch's compact map from its content, for what reads
// every name it holds, and returns it. The server does not touch the map
// while the cache opens or answers a watch of its type (assumption 3).
//
// The server forgets a name its request unsubscribes from, unless it was
// subscribed to by name (then it holds it at no version, an entry of the
// map): forgetting one a compact map stands for did nothing, so the
// request's are forgotten here. (One of a request held, then cancelled by
// the stream's next, stays held: Envoy's VHDS unsubscribes from none.)
func expandHeld(w *watch) map[string]string {
	h := heldBy(w)
	if h.all != nil {
		var forgotten []string
		if w.deltaReq != nil {
			for _, name := range w.deltaReq.GetResourceNamesUnsubscribe() {
				if _, ok := h.m[name]; !ok {
					forgotten = append(forgotten, name)
				}
			}
		}
		h.all.fill(h.m)
		for _, name := range forgotten {
			delete(h.m, name)
		}
	} else if _, ok := h.m[allHeld]; ok {
		delete(h.m, allHeld)
		delete(h.m, syncedAt) // holds no version whole
	}
	if w.stream != nil {
		delete(w.stream.allHeld, w.key)
	}
	return h.m
}

// noteHeld records, as a delta answer is delivered, the content its
// client will hold whole once sent, or that it will not: the stream keeps
// the content its map stands for.
func noteHeld(w *watch, r *deltaResponse) {
	if w.stream == nil {
		return
	}
	if r.all == nil {
		delete(w.stream.allHeld, w.key)
		return
	}
	if w.stream.allHeld == nil {
		w.stream.allHeld = map[string]*heldContent{}
	}
	w.stream.allHeld[w.key] = r.all
}

// compactMap is the map that says its client holds all of c.
func (c *heldContent) compactMap() map[string]string {
	return map[string]string{syncedAt: c.version, allHeld: c.version}
}

// fill makes a compact map that c stands for a map of every name.
func (c *heldContent) fill(m map[string]string) {
	for j, name := range c.names {
		if _, ok := m[name]; !ok {
			m[name] = c.hashes[j]
		}
	}
	delete(m, allHeld)
}

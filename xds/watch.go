package xds

import (
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// The watch lifecycle. Every request the xDS servers hand the
// cache, state of the world or delta, goes through the same steps, here:
//
//  1. Bind. The request callback tells the cache which stream the request
//     is on (bind, stream.go): the cache keeps what it knows of each
//     stream in one streamState.
//  2. Open. The server asks for a watch for the request (CreateWatch,
//     CreateDeltaWatch), after cancelling the stream's previous watch of
//     the type (assumption 3): open.
//  3. What is owed. Unless the watch is held (make-before-break), what the
//     client lacks of the current content (the protocol's now), else what
//     the cache owes the stream besides (shared EDS).
//  4. Response, or wait. Something owed is delivered at once and the
//     watch is done; otherwise the watch is stored until an update.
//  5. Update. A new content answers each stored watch with what changed
//     (the protocol's changes), or with everything it lacks when it was
//     held and no longer is; a held watch is answered when its stream is
//     ready (recheck).
//  6. ACK. The client's acknowledgement is the next request of the type:
//     a new watch, from step 1. Nothing is kept of a watch once answered.
//  7. Cancel and close. The server cancels a watch before the next of its
//     type and every watch when the stream ends, then the close callback
//     forgets the stream (forget, stream.go).
//
// SotW and delta differ only in how what is owed is worked out and how a
// response is delivered (protocol); everything else above is shared.

// watch is one request waiting for, or being given, its answer.
type watch struct {
	id      int64
	typeURL string
	// key is the content the watch is answered from and is stored under:
	// its type URL, or deltaRouteKey for a delta stream's routes
	// (deltaroutes.go).
	key string
	sub cache.Subscription
	// stream is the watch's stream; nil for a request no callback bound
	// (REST, tests driving the cache alone), which no part looks at.
	stream *streamState
	// held says the watch was kept from a change until its stream has
	// the clusters that change added (makebeforebreak.go), and is
	// answered from everything the client holds when released.
	held bool
	// compareAll says an earlier request of the stream's went unanswered
	// (streamState.unheard): what the client lacks is found by comparing
	// everything, not from this request's names alone.
	compareAll bool
	// namedList is the names of a SotW request when they are a
	// content's own list: it names exactly that content's resources
	// (sotwheld.go).
	namedList []string
	proto     protocol
	// The request and channel, of one protocol.
	sotwReq  *cache.Request
	sotwOut  chan cache.Response
	deltaReq *cache.DeltaRequest
	deltaOut chan cache.DeltaResponse
}

// xdsResponse is a SotW (*sotwResponse) or delta (*deltaResponse) answer.
type xdsResponse interface{ GetResponseVersion() string }

// step is where in the lifecycle a watch is answered or stored.
type step int

const (
	stepRequest step = iota // its request came (steps 2-4)
	stepUpdate              // an update answers it (step 5)
	stepRelease             // its hold ended (step 5, recheck)
	stepPart                // a part answers it outside a request (shared EDS)
)

// watchPart is one feature of the lifecycle, in a file of its own
// (makebeforebreak.go, ...): the lifecycle tells every part of each step,
// in the cache's order of parts, and a part does nothing at the steps it
// has no business in. Parts are told only of watches on a bound stream
// (w.stream set); they run holding the cache's lock.
type watchPart interface {
	// updated is told of an update's changes once they are the current
	// content, before any watch is answered from them; true asks that
	// the held watches be rechecked after the update.
	updated(c *resourceCache, changes []typeChange) (recheck bool)
	// holds says whether a watch waits, whatever its client lacks.
	holds(c *resourceCache, w *watch) bool
	// owes is what the part owes a watch that the content does not
	// answer, or nil.
	owes(c *resourceCache, w *watch) xdsResponse
	// settled is told how a step left a watch: answered with r, or
	// stored or released unanswered (r nil).
	settled(c *resourceCache, at step, w *watch, r xdsResponse)
	// closed is told of a stream's end, its state about to be dropped.
	closed(c *resourceCache, s *streamState)
}

// protocol is what SotW and delta do differently.
type protocol interface {
	// now is what the client lacks of the current content, or nil: a
	// request's answer, or a released watch's.
	now(w *watch, ts *typeSnapshot) xdsResponse
	// changes is what the client lacks after an update, its watch having
	// been open (it held everything) when the update came; or nil.
	changes(w *watch, ts *typeSnapshot) xdsResponse
	// deliver puts r on the watch's channel and tells the parts
	// (settled), in the order the protocol needs.
	deliver(c *resourceCache, w *watch, r xdsResponse, at step)
	// partial is an answer with the resources of ts at the given
	// positions, what the client holds otherwise kept (a part's answer).
	partial(w *watch, ts *typeSnapshot, send []int) xdsResponse
	// nonce and nack are the request's nonce and whether it is a NACK.
	nonce(w *watch) string
	nack(w *watch) bool
}

// open takes a request's watch (steps 2-4): answers it at once with what
// is owed, or stores it until an update, and returns its cancel.
func (c *resourceCache) open(w *watch) func() {
	if w.stream != nil && w.stream.unheard[w.typeURL] {
		w.compareAll = true
		delete(w.stream.unheard, w.typeURL)
	}
	w.held = c.holds(w)
	var r xdsResponse
	if ts, ok := c.types[w.key]; ok && !w.held {
		r = w.proto.now(w, ts)
	}
	if r == nil && w.stream != nil {
		r = c.owes(w)
	}
	if r != nil {
		w.proto.deliver(c, w, r, stepRequest)
		return func() {}
	}
	c.store(w)
	c.settled(stepRequest, w, nil)
	key, typeURL, id := w.key, w.typeURL, w.id
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if _, live := c.watches[key][id]; live && (w.held || w.compareAll) && w.stream != nil {
			// Cancelled unanswered by the stream's next request: what this
			// one asked for must not be lost (streamState.unheard).
			if w.stream.unheard == nil {
				w.stream.unheard = map[string]bool{}
			}
			w.stream.unheard[typeURL] = true
		}
		c.unstore(w)
	}
}

// store keeps a watch until an update or a part answers it, or the
// server cancels it: among the type's watches, and as its stream's watch
// of the type.
func (c *resourceCache) store(w *watch) {
	c.next++
	w.id = c.next
	ws := c.watches[w.key]
	if ws == nil {
		ws = map[int64]*watch{}
		c.watches[w.key] = ws
	}
	ws[w.id] = w
	if s := w.stream; s != nil {
		if s.stored == nil {
			s.stored = map[string]*watch{}
		}
		s.stored[w.key] = w
	}
}

// unstore forgets a stored watch, answered or cancelled; again is a no-op.
func (c *resourceCache) unstore(w *watch) {
	delete(c.watches[w.key], w.id)
	if s := w.stream; s != nil && s.stored[w.key] == w {
		delete(s.stored, w.key)
	}
}

// answerUpdate answers the stored watches of a content an update changed
// (step 5), in the update's order (update, cache.go).
func (c *resourceCache) answerUpdate(key string, ts *typeSnapshot) {
	for _, w := range c.watches[key] {
		if c.holds(w) {
			w.held = true // answered by recheck
			continue
		}
		var r xdsResponse
		if w.held { // it missed a change: compare everything
			w.held = false
			r = w.proto.now(w, ts)
		} else {
			r = w.proto.changes(w, ts)
		}
		if r != nil {
			w.proto.deliver(c, w, r, stepUpdate)
			c.unstore(w)
		}
	}
}

// recheck answers the held watches of every stream that are held no
// more: from everything the client holds, since it missed at least one
// change.
func (c *resourceCache) recheck() {
	// In the update's order, which the delta server keeps (assumption 8).
	for _, key := range updateOrder {
		ws, ts := c.watches[key], c.types[key]
		if !heldBack(keyType(key)) || ts == nil {
			continue
		}
		for _, w := range ws {
			c.release(w, ts)
		}
	}
}

// recheckStream is recheck for one stream's watches alone. It looks at
// the stream's own (streamState.stored): make-before-break rechecks a
// stream on each of its endpoint requests, and going through every
// stream's stored watches then made each acknowledgement cost as much as
// there are streams, under the cache's lock (docs/benchmarks.md, "Issue
// 31: fan-out per client").
func (c *resourceCache) recheckStream(s *streamState) {
	for _, key := range updateOrder {
		w, ts := s.stored[key], c.types[key]
		if w == nil || !heldBack(keyType(key)) || ts == nil {
			continue
		}
		c.release(w, ts)
	}
}

// release answers a held watch whose hold has ended, or marks it not
// held when its client lacks nothing.
func (c *resourceCache) release(w *watch, ts *typeSnapshot) {
	if !w.held || c.holds(w) {
		return
	}
	w.held = false
	if r := w.proto.now(w, ts); r != nil {
		w.proto.deliver(c, w, r, stepRelease)
		c.unstore(w)
	} else {
		c.settled(stepRelease, w, nil)
	}
}

// updated tells the parts of an update; true: some asked for a recheck.
func (c *resourceCache) updated(changes []typeChange) bool {
	recheck := false
	for _, p := range c.parts {
		if p.updated(c, changes) {
			recheck = true
		}
	}
	return recheck
}

// holds says whether a part holds a watch.
func (c *resourceCache) holds(w *watch) bool {
	if w.stream == nil {
		return false
	}
	for _, p := range c.parts {
		if p.holds(c, w) {
			return true
		}
	}
	return false
}

// owes is what a part owes a bound watch besides what its client lacks of
// the content, or nil.
func (c *resourceCache) owes(w *watch) xdsResponse {
	for _, p := range c.parts {
		if r := p.owes(c, w); r != nil {
			return r
		}
	}
	return nil
}

// settled tells the parts how a step left a bound watch: answered with r,
// or stored or released unanswered (r nil).
func (c *resourceCache) settled(at step, w *watch, r xdsResponse) {
	if w.stream == nil {
		return
	}
	for _, p := range c.parts {
		p.settled(c, at, w, r)
	}
}

// isDelta says whether a watch is of a delta stream.
func (w *watch) isDelta() bool { return w.deltaReq != nil }

type sotwProtocol struct{}

func (sotwProtocol) now(w *watch, ts *typeSnapshot) xdsResponse {
	if r := sotwNow(w, ts); r != nil {
		return r
	}
	return nil
}

func (sotwProtocol) changes(w *watch, ts *typeSnapshot) xdsResponse {
	var r *sotwResponse
	switch {
	case !ts.fullState: // scopes.go
		r = sotwChanges(w, ts)
	case w.sotwReq.GetVersionInfo() != ts.version:
		r = sotwAnswer(w.sotwReq, w.sub, ts)
	}
	if r == nil {
		return nil
	}
	return r
}

// deliver tells the parts before the send: the SotW server takes the
// response on the stream's goroutine, and what a part arranges for its
// sending (sotwResponse.onSend) must be in place by then. Each watch has
// a channel of its own (assumption 5), so nothing a part sends on another
// is ordered after this one anyway.
func (sotwProtocol) deliver(c *resourceCache, w *watch, r xdsResponse, at step) {
	resp := r.(*sotwResponse)
	if ts := c.types[w.key]; ts != nil && len(resp.resources) > 0 && len(resp.resources) == len(ts.anys) && &resp.resources[0] == &ts.anys[0] {
		c.lists.noteSotw(ts) // sharedlists.go
	}
	noteSotwHeld(w, resp) // sotwheld.go
	c.settled(at, w, r)
	w.sotwOut <- resp
}

func (sotwProtocol) partial(w *watch, ts *typeSnapshot, send []int) xdsResponse {
	return newSotwPartial(w.sotwReq, w.sub.ReturnedResources(), ts, send, nil, false)
}

func (sotwProtocol) nonce(w *watch) string { return w.sotwReq.GetResponseNonce() }
func (sotwProtocol) nack(w *watch) bool    { return w.sotwReq.GetErrorDetail() != nil }

type deltaProtocol struct{}

// now and changes answer with all the client subscribes to of the
// current version, so when its map can be compact, it will stand for
// that (heldall.go).
func (deltaProtocol) now(w *watch, ts *typeSnapshot) xdsResponse {
	if r := deltaNow(w, ts); r != nil {
		if compactable(w, ts) {
			r.all = heldContentOf(ts)
		}
		return r
	}
	return nil
}

func (deltaProtocol) changes(w *watch, ts *typeSnapshot) xdsResponse {
	if r := deltaChanges(w.deltaReq, w.sub, heldBy(w), ts); r != nil {
		if compactable(w, ts) {
			r.all = heldContentOf(ts)
		}
		return r
	}
	return nil
}

// deliver tells the parts after the send: a stream's delta watches share
// one channel, which the server sends in order (assumption 8), so what a
// part puts on it then reaches the client after this response.
func (deltaProtocol) deliver(c *resourceCache, w *watch, r xdsResponse, at step) {
	resp := r.(*deltaResponse)
	// Every resource of the type, in order: from the second such answer
	// of the content, the list streams share (sharedlists.go).
	if ts := c.types[w.key]; ts != nil && len(ts.anys) >= sharedListMin && everyResource(resp.resources, ts) {
		if shared := c.lists.deltaList(ts); shared != nil {
			resp.resources = shared
		}
	}
	noteHeld(w, resp) // heldall.go
	w.deltaOut <- resp
	c.settled(at, w, r)
}

func (deltaProtocol) partial(w *watch, ts *typeSnapshot, send []int) xdsResponse {
	if r := newDeltaResponse(w.deltaReq, heldBy(w), ts, send, nil); r != nil {
		return r
	}
	return nil
}

func (deltaProtocol) nonce(w *watch) string { return w.deltaReq.GetResponseNonce() }
func (deltaProtocol) nack(w *watch) bool    { return w.deltaReq.GetErrorDetail() != nil }

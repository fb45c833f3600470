package xds

import (
	"context"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"sync"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// resourceCache is the configuration the xDS servers stream to
// Envoy: it implements go-control-plane's cache.Cache for the one
// configuration every Envoy of a deployment shares.
//
// It replaces go-control-plane's snapshot cache, which at scale spent most
// of a change's time on work that does not depend on the change: on every
// snapshot it compared each delta stream's whole state with the whole
// snapshot (every resource of the largest workload, for one changed load
// assignment), and it encoded each resource again for every response that
// carried it, so for every stream: in v0.14 its responses wrap the
// snapshot's resources in new cachedResources (createResponse,
// createDeltaResponse), and Snapshot.ConstructVersionMap encodes every
// resource once more to hash it. go-control-plane's LinearCache does not:
// v0.14 keeps one cachedResource per resource from SetResources or
// UpdateResources until the next, whose encoding and hash are each
// computed once, on first use (getMarshaledResource, getResourceVersion),
// and shared by every stream; a response also keeps the message it built.
//
// What this cache still does that LinearCache does not
// (docs/benchmarks.md, "Our xDS cache against LinearCache + MuxCache",
// measured both): each resource is encoded, hashed and validated once,
// when the snapshotter first sees it, and its Any is shared by every
// response (LinearCache builds a new Any per resource per response); SotW
// versions are by content, where LinearCache's follow the publish, so
// after SetResources every SotW client is sent everything again; an update
// is handed the names that changed, found by identity, where SetResources
// encodes and hashes every resource again; a client already holding the
// current version of everything is answered without comparing its names
// (sotwInSync, deltaSince), where LinearCache compares every name of a
// subscription by name on each ACK and registers its watch under each
// name; a SotW wildcard client's holdings are one entry, not a map of every
// name; and all types are published as one consistent snapshot, where
// LinearCaches under a MuxCache are independent.
//
// What happens to a watch, SotW or delta, is one lifecycle (watch.go), its
// features parts behind one interface (watchPart), each in its own file.
//
// It relies on how go-control-plane v0.14's SotW and delta servers drive a
// cache, beyond what the cache.Cache interface promises (it even edits a
// subscription's map, which the interface forbids). docs/xds-cache.md lists
// each assumption with the test that checks it on the real server
// (TestGoControlPlaneContract); the comments here say "(assumption N)"
// where one is relied on.
type resourceCache struct {
	log *slog.Logger

	mu    sync.Mutex
	types map[string]*typeSnapshot // by content key (watch.key); never written to once set
	// watches are the stored watches, SotW and delta, by content key and
	// number (watch.go).
	watches map[string]map[int64]*watch
	next    int64
	// streams is what the cache knows of each stream (stream.go); bound
	// maps a request the callback bound to its stream (bind).
	streams map[streamKey]*streamState
	bound   map[any]*streamState
	// parts are the features of the watch lifecycle (watch.go), in the
	// order they are told of each step.
	parts []watchPart
	mbb   makeBeforeBreak // makebeforebreak.go
	eds   sharedEDS       // sharededs.go
	acks  routeAcks       // routeacks.go
	// lists are the whole lists of resources streams share (sharedlists.go).
	lists *sharedLists
	// served are the current contents' names, for decoding SotW requests
	// (requestnames.go).
	served servedNames
}

var _ cache.Cache = (*resourceCache)(nil)

// updateOrder is the order in which an update answers the types: secrets and
// clusters before the listeners and routes that use them, so that an Envoy
// has what a new listener or route refers to by the time it gets it, and
// does not warm or drop traffic waiting for it. Only the delta server keeps
// that order: it sends a stream's responses in the order they were put on
// its one channel (assumption 8). The SotW server gives each type a channel
// of its own and picks among those ready at random, so a SotW Envoy may get
// a listener before its clusters and warms it until they come.
//
// The keys are the cache's content keys (watch.key): type URLs, and
// deltaRouteKey, delta streams' routes (deltaroutes.go).
var updateOrder = []string{
	resource.SecretType, resource.ClusterType, resource.EndpointType, resource.ListenerType, resource.ScopedRouteType, resource.RouteType, deltaRouteKey, resource.VirtualHostType,
}

func newResourceCache(logger *slog.Logger) *resourceCache {
	c := &resourceCache{
		log:     logger,
		types:   map[string]*typeSnapshot{},
		watches: map[string]map[int64]*watch{},
		streams: map[streamKey]*streamState{},
		bound:   map[any]*streamState{},
		lists:   newSharedLists(),
	}
	c.parts = []watchPart{scopes{}, vhds{}, &c.eds, &c.acks, &c.mbb}
	return c
}

// typeChange is one type's part of an update: its new content and what
// changed since the content the cache held.
type typeChange struct {
	typeURL string
	state   *typeSnapshot
	// prev is the content state replaces; the cache sets it.
	prev *typeSnapshot
}

// update makes the given types' new content current and answers the
// watches it concerns. Each state says which names it updated and removed
// relative to the state it replaces.
//
// It sends on the watches' channels holding the lock, without a select:
// each watch is answered at most once and then forgotten, and the server
// gives every watch room for that one response (assumption 5), so no send
// blocks. A watch still here is one whose stream has not cancelled it,
// which the stream does before touching its subscription (assumption 3):
// the subscriptions read here are not being written. It returns the
// update's number (routeacks.go).
func (c *resourceCache) update(changes []typeChange) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	byType := make(map[string]*typeSnapshot, len(changes))
	for i := range changes {
		ch := &changes[i]
		ch.prev = c.types[ch.typeURL]
		c.types[ch.typeURL] = ch.state
		if ch.prev != ch.state {
			c.lists.drop(ch.prev) // sharedlists.go
		}
		byType[ch.typeURL] = ch.state
	}
	c.served.set(changes)   // requestnames.go
	if c.updated(changes) { // watch.go
		defer c.recheck()
	}
	for _, typeURL := range updateOrder {
		if ts, ok := byType[typeURL]; ok {
			c.answerUpdate(typeURL, ts) // watch.go
		}
	}
	return c.acks.seq
}

// sotwNow is what a state-of-the-world request is answered with at once,
// if anything: what the client lacks of the current content.
func sotwNow(w *watch, ts *typeSnapshot) *sotwResponse {
	req, sub := w.sotwReq, w.sub
	switch {
	case !ts.fullState: // scopes.go
		return sotwDiff(w, ts)
	case sotwOutdated(req, sub, ts):
		return sotwAnswer(req, sub, ts)
	}
	return nil
}

// deltaNow is what an incremental request is answered with at once, if
// anything: what the client lacks or holds in excess, or, for the first
// request of a wildcard (or namespaced) subscription, an empty answer,
// which Envoy waits for to finish starting. compareAll skips the short
// way (deltaSince), which reads this request's names alone, when an earlier
// request of the stream's went unanswered.
func deltaNow(w *watch, ts *typeSnapshot) *deltaResponse {
	req, sub := w.deltaReq, w.sub
	if !w.compareAll {
		if resp, ok := deltaSince(req, sub, heldBy(w), ts); ok { // heldall.go
			return resp
		}
	}
	known := expandHeld(w) // heldall.go: the comparison reads every name held
	resp := deltaDiff(req, sub, known, ts)
	if resp != nil || !(sub.IsWildcard() || ts.namespaced) || req.GetResponseNonce() != "" {
		return resp
	}
	return &deltaResponse{req: req, version: ts.version, returned: deltaHeld(req, known)}
}

// CreateWatch answers a state-of-the-world request at once when the client
// does not have the current version of what it asks for, and otherwise
// waits for a change. The server calls it from the stream's goroutine, for
// each request it takes, after the request callback (assumption 1) and
// with the very request the callback saw and may have rewritten
// (assumption 2); it cancels this watch before asking for the next of the
// type, and at the end of the stream (assumption 3). Requests that answer
// an older response than the last one sent never get here (assumption 4).
func (c *resourceCache) CreateWatch(req *cache.Request, sub cache.Subscription, out chan cache.Response) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &watch{typeURL: req.GetTypeUrl(), key: contentKey(req.GetTypeUrl(), false), sub: sub, stream: c.streamOf(req), proto: sotwProtocol{}, sotwReq: withoutNames(req), sotwOut: out} // stream.go
	c.openSotw(w, req)                                                                                                                                                                   // sotwheld.go
	return c.open(w), nil                                                                                                                                                                // watch.go
}

// sotwOutdated says whether a client lacks something of the current
// content: another version, or a resource it subscribes to and was never
// sent (newly named, or new to a wildcard subscription).
func sotwOutdated(req *cache.Request, sub cache.Subscription, ts *typeSnapshot) bool {
	if req.GetVersionInfo() != ts.version {
		return true
	}
	known := sub.ReturnedResources()
	if sub.IsWildcard() {
		if known[syncedAt] == ts.version {
			return false // sent everything of this version
		}
		for _, name := range ts.names {
			if _, ok := known[name]; !ok {
				return true
			}
		}
		return false
	}
	for name := range subscribedNames(sub) { // sotwserver.go
		if _, sent := known[name]; !sent {
			if _, exists := ts.index.lookup(name); exists {
				return true
			}
		}
	}
	return false
}

// sotwDiff answers a state-of-the-world request for a type whose responses
// need not hold every resource (routes, load assignments, secrets: the
// protocol requires the full state for listeners and clusters only): with
// the resources the client subscribes to whose version it does not have.
// The first request of a stream is answered even if with nothing; later
// ones only when there is something to send. Sending only what changed is
// what keeps an endpoint change at 10,000 Ingresses from sending 100,000
// load assignments to every Envoy. The versions a client holds are kept per
// resource here, as in delta.
func sotwDiff(w *watch, ts *typeSnapshot) *sotwResponse {
	req, sub := w.sotwReq, w.sub
	h := heldOf(w) // sotwheld.go
	if sotwInSync(req, sub, h, ts) {
		compactInPlace(w, h, ts)
		return nil
	}
	if h.all != nil && !sameList(h.all.names, ts.names) {
		// Names came or went since the content the map stands for.
		h = expandHeldSotw(w, h)
	}
	send := lacking(h, sub, ts, everything(sub, ts), everythingCount(sub, ts))
	if len(send) == 0 && req.GetResponseNonce() != "" {
		compactInPlace(w, h, ts)
		return nil
	}
	return newSotwPartial(req, h.m, ts, send, heldGone(h, ts, maps.Keys(h.m), len(h.m)), leavesAll(w, ts))
}

// sotwInSync says whether a state-of-the-world request by name only
// acknowledges a response of the current version that left the client
// holding everything it asks for: then there is nothing to compare. The
// server drops from what a client holds whatever its request no longer
// names before it asks for the watch (assumption 13), so the client holds a
// subset of its subscription, and a subset of the same size is all of it;
// and a response of the current version left what it held at the current
// version (the map the server hands back is the one that response
// returned, assumption 6). Comparing 10,000 names on each of
// 500 Envoys' acknowledgements of an endpoint change was most of a fan-out.
//
// A map that stands for a content (sotwheld.go) is in sync when that
// content is the current one: the request names exactly its names
// (openSotw), and the names the map gives were sent at its version or
// later.
func sotwInSync(req *cache.Request, sub cache.Subscription, h held, ts *typeSnapshot) bool {
	if req.GetResponseNonce() == "" || req.GetErrorDetail() != nil || req.GetVersionInfo() != ts.version || sub.IsWildcard() {
		return false
	}
	if h.all != nil {
		return h.all.version == ts.version
	}
	return len(h.m) == subscribedCount(sub)
}

// sotwChanges is sotwDiff for a client that was up to date before the
// last update: only the names it touched can differ.
//
// A client that held everything it names before (the watch was open)
// holds all of this content once sent what changed, if its request names
// exactly this content's resources (sotwheld.go).
func sotwChanges(w *watch, ts *typeSnapshot) *sotwResponse {
	req, sub := w.sotwReq, w.sub
	h := heldOf(w) // sotwheld.go
	if h.all != nil && len(ts.removed) > 0 {
		h = expandHeldSotw(w, h) // what is gone is forgotten name by name
	}
	send := lacking(h, sub, ts, slices.Values(ts.updated), len(ts.updated))
	if len(send) == 0 {
		return nil
	}
	return newSotwPartial(req, h.m, ts, send, heldGone(h, ts, slices.Values(ts.removed), len(ts.removed)), leavesAll(w, ts))
}

// newSotwPartial sends the resources at the given positions. A state-of-
// the-world response cannot withdraw a resource of these types (Envoy drops
// a load assignment when its cluster goes); gone names are forgotten, so
// that one that comes back is sent again.
//
// What the client will hold is recorded in known itself, the map the
// stream's subscription holds, rather than in a copy: a copy is every name
// per Envoy per endpoint change. It is recorded only when the server
// takes the response to send it (GetReturnedResources), not here: the
// SotW server drops a response still waiting in its watch's channel when
// it handles a request of the same type first (it opens the next watch
// with a new channel; assumption 7), and a map that already said the
// client holds what was dropped would keep the next watch from sending it.
// Until then the server touches that map only from its own goroutine,
// after closing the watch (which takes the cache's lock, held here;
// assumption 3), and it hands the map back unchanged with the next watch
// (assumption 6).
//
// all says the client will hold every resource of ts once sent this: the
// response then returns a map of its own that stands for ts (sotwheld.go).
func newSotwPartial(req *cache.Request, known map[string]string, ts *typeSnapshot, send []int, gone []string, all bool) *sotwResponse {
	held := known
	var compact *sotwCompact
	if all {
		compact = &sotwCompact{m: map[string]string{}, all: heldContentOf(ts)}
		held = compact.m
	} else if len(held) == 0 {
		// A map of its own, of the right size: the server keeps the one
		// GetReturnedResources returns (assumption 6), and filling the
		// server's empty one with every load assignment an Envoy
		// connecting asks for grew it again and again.
		held = make(map[string]string, len(send))
	}
	// Every resource of the type (a client naming every load assignment,
	// as an Envoy does when it connects) is the content's own list, which
	// streams share (sharedlists.go).
	// What the client is sent, for the registry and for held: the
	// content's own lists when it is all of them.
	resources, sent := ts.anys, resourceList{names: ts.names, versions: ts.hashes}
	if !everyPosition(send, len(ts.anys)) {
		resources = make([]*anypb.Any, len(send))
		sent = resourceList{names: make([]string, len(send)), versions: make([]string, len(send))}
		for i, j := range send {
			resources[i], sent.names[i], sent.versions[i] = ts.anys[j], ts.names[j], ts.hashes[j]
		}
	}
	return &sotwResponse{req: req, version: ts.version, resources: resources, returned: held, sent: sent, partial: true, gone: gone, compact: compact}
}

// sotwReturned is what a state-of-the-world wildcard client holds after
// being sent everything: every resource of the type's version, which one
// entry says (the server keeps this map per stream and, for a wildcard
// subscription, never edits it: assumption 6), rather than a map of every
// name per Envoy.
func (ts *typeSnapshot) sotwReturned() map[string]string {
	return map[string]string{syncedAt: ts.version}
}

// sotwAnswer is the full state of what a client subscribes to, in the
// order the translator produced it.
func sotwAnswer(req *cache.Request, sub cache.Subscription, ts *typeSnapshot) *sotwResponse {
	version := ts.version
	if sub.IsWildcard() {
		return &sotwResponse{req: req, version: version, resources: ts.anys, sent: resourceList{names: ts.names, version: version}, returned: ts.sotwReturned()}
	}
	resources := make([]*anypb.Any, 0, min(subscribedCount(sub), len(ts.names)))
	names := make([]string, 0, cap(resources))
	returned := make(map[string]string, cap(resources))
	for j, name := range ts.names {
		if subscribes(sub, name) {
			resources = append(resources, ts.anys[j])
			names = append(names, name)
			returned[name] = version
		}
	}
	if len(resources) == len(ts.anys) {
		// All of them: the content's own lists, which streams share
		// (sharedlists.go).
		resources, names = ts.anys, ts.names
	}
	return &sotwResponse{req: req, version: version, resources: resources, sent: resourceList{names: names, version: version}, returned: returned}
}

// CreateDeltaWatch answers an incremental request at once with whatever the
// client lacks or holds in excess, and otherwise waits for a change. The
// first request of a wildcard subscription is always answered, if only
// with nothing, because Envoy waits for that answer to finish starting
// (the server sends an empty response as it is: assumption 11). A
// reconnecting Envoy's initial_resource_versions are the subscription's
// ReturnedResources at its first watch (assumption 12), which is what
// lets it be sent only what changed. All of a stream's watches share one
// channel, with room for a response of each type, which the server empties
// before it takes the next request (assumptions 5 and 7).
func (c *resourceCache) CreateDeltaWatch(req *cache.DeltaRequest, sub cache.Subscription, out chan cache.DeltaResponse) (func(), error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &watch{typeURL: req.GetTypeUrl(), key: contentKey(req.GetTypeUrl(), true), sub: sub, stream: c.streamOf(req), proto: deltaProtocol{}, deltaReq: req, deltaOut: out}
	return c.open(w), nil // watch.go
}

// syncedAt is an entry of the client state a response leaves (the map
// go-control-plane keeps for the stream and hands back with the next
// request, entries it knows nothing of included: assumption 6): the type
// version that state is complete for. Delta responses
// add it; a full SotW answer to a wildcard subscription is only it (see
// sotwReturned). No resource name starts with a NUL.
const syncedAt = "\x00synced-at"

// deltaDiff compares everything a client holds (known, the subscription's
// map, not compact) with the current content: the resources it subscribes
// to whose version it does not have, and those it holds that are gone. Nil
// when there is nothing to send.
func deltaDiff(req *cache.DeltaRequest, sub cache.Subscription, known map[string]string, ts *typeSnapshot) *deltaResponse {
	if ts.namespaced {
		forgetResubscribed(req, known) // vhds.go
	}
	held := maps.Keys(known)
	if !sub.IsWildcard() && !ts.namespaced {
		held = maps.Keys(sub.SubscribedResources())
	}
	h := heldIn(known)
	return withMissing(req, h, ts, lacking(h, sub, ts, everything(sub, ts), everythingCount(sub, ts)), heldGone(h, ts, held, len(known))) // ondemand.go
}

// deltaChanges is deltaDiff for a client whose watch was open when the
// last update came: it held everything before it, so only the names the
// update touched can differ.
func deltaChanges(req *cache.DeltaRequest, sub cache.Subscription, h held, ts *typeSnapshot) *deltaResponse {
	return newDeltaResponse(req, h, ts, lacking(h, sub, ts, slices.Values(ts.updated), len(ts.updated)), heldGone(h, ts, slices.Values(ts.removed), len(ts.removed)))
}

// deltaSince answers a delta request from a client whose last response
// left it with everything of the current version, or of the version the
// current state replaced, and reports false for any other. Only the names
// the request subscribes to or unsubscribes from can differ, and, when it
// crossed an update, those that update touched; with none, there is
// nothing to send. That covers the requests a delta Envoy sends most: the
// acknowledgement of each response (most often of the current version,
// sometimes crossing the next change), the cluster it asks for on demand,
// the load assignment it then names. At 10,000 Ingresses a comparison of
// everything it holds (deltaDiff) is 100,000 lookups, under the cache's
// lock. The server has already applied the request's subscription change
// (assumption 6). A namespaced type (VHDS) and the wildcard's own name
// ("*"), where a name subscribed to stands for many, and a stream's first
// request, whose map is the client's initial versions, are left to
// deltaDiff.
func deltaSince(req *cache.DeltaRequest, sub cache.Subscription, h held, ts *typeSnapshot) (*deltaResponse, bool) {
	subscribe, unsubscribe := req.GetResourceNamesSubscribe(), req.GetResourceNamesUnsubscribe()
	changesSubscription := len(subscribe) > 0 || len(unsubscribe) > 0
	if changesSubscription && ts.namespaced || len(req.GetInitialResourceVersions()) > 0 ||
		slices.Contains(subscribe, wildcardName) || slices.Contains(unsubscribe, wildcardName) {
		return nil, false
	}
	v, ok := h.m[syncedAt]
	if !ok || v != ts.version && (ts.replaced == "" || v != ts.replaced) {
		return nil, false
	}
	// A name unsubscribed from while a wildcard is answered again, as the
	// protocol asks (the server marks it held at no version); one
	// unsubscribed otherwise is out of what the client holds already.
	names := slices.Concat(subscribe, unsubscribe)
	gone := unsubscribe
	if v != ts.version {
		names = append(names, ts.updated...)
		gone = slices.Concat(unsubscribe, ts.removed)
	}
	return withMissing(req, h, ts, lacking(h, sub, ts, slices.Values(names), len(names)), heldGone(h, ts, slices.Values(gone), len(gone))), true
}

// wildcardName is the name by which a delta client subscribes to every
// resource of a type, or stops to.
const wildcardName = "*"

// everything is what a client could lack: every resource if it subscribes
// to all (wildcard), else the ones it names. Whether it is a wildcard is
// the server's call: a request naming nothing is one (assumption 17).
func everything(sub cache.Subscription, ts *typeSnapshot) iter.Seq[string] {
	if sub.IsWildcard() && ts.lazy != nil {
		// ondemand.go: the eager ones, and the lazy ones asked for; not
		// every cluster, of which a delta Envoy connecting is sent a few
		// (a name that does not exist, lacking skips).
		eager, asked := ts.lazy.Eager, sub.SubscribedResources()
		return func(yield func(string) bool) {
			for name := range eager {
				if !yield(name) {
					return
				}
			}
			for name := range asked {
				if !yield(name) {
					return
				}
			}
		}
	}
	if sub.IsWildcard() {
		return slices.Values(ts.names)
	}
	if ts.namespaced {
		return inNamespaces(ts, sub.SubscribedResources()) // vhds.go
	}
	return subscribedNames(sub)
}

// everythingCount is how many names everything yields, at most.
func everythingCount(sub cache.Subscription, ts *typeSnapshot) int {
	if sub.IsWildcard() && ts.lazy != nil {
		return len(ts.lazy.Eager) + len(sub.SubscribedResources())
	}
	if sub.IsWildcard() || ts.namespaced {
		return len(ts.names)
	}
	return subscribedCount(sub)
}

// lacking returns, in the translator's order and once each, the positions
// of the resources among names that exist, that the client subscribes to,
// and whose current version it does not hold (h). count is about how many
// names there are: many are looked up in a map (nameIndex.bulk).
func lacking(h held, sub cache.Subscription, ts *typeSnapshot, names iter.Seq[string], count int) []int {
	lookup := ts.index.bulk(count)
	var send []int
	for name := range names {
		j, exists := lookup(name)
		if !exists {
			continue
		}
		if !ts.wantedBy(sub, name) { // ondemand.go
			continue
		}
		if v, ok := h.version(name); !ok || v != ts.hashes[j] {
			send = append(send, j)
		}
	}
	slices.Sort(send)
	return slices.Compact(send)
}

// heldGone returns, sorted and once each, the names among names (about
// count of them) that the client holds (h) and that no longer exist.
func heldGone(h held, ts *typeSnapshot, names iter.Seq[string], count int) []string {
	var gone []string
	lookup := ts.index.bulk(count)
	for name := range names {
		if _, ok := h.version(name); !ok || name == syncedAt || name == allHeld {
			continue
		}
		if _, exists := lookup(name); !exists {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	return slices.Compact(gone)
}

// newDeltaResponse sends the resources at the given positions and removes
// the given names; what the client will hold afterwards is what it held
// (h), so changed. Nil when there is nothing to send or remove.
func newDeltaResponse(req *cache.DeltaRequest, h held, ts *typeSnapshot, send []int, removed []string) *deltaResponse {
	if len(send) == 0 && len(removed) == 0 {
		return nil
	}
	return &deltaResponse{req: req, version: ts.version, resources: deltaResources(ts, send, false), removed: removed, returned: deltaHeld(req, h.m), base: h.all}
}

// deltaHeld is the map a delta response brings up to date as the server
// sends it (deltaResponse.GetNextVersionMap): the subscription's own,
// rather than a copy of the 100,000 names a client may hold at 10,000
// Ingresses, for each response. The server sends every delta response,
// in order, before it handles the stream's next request (assumption 7),
// and a type has one watch at a time, so no other response of the type is
// made from the map in between. The first request's map is the request's
// initial resource versions: that one is copied, the request being the
// callbacks' too. An empty one is left for GetNextVersionMap to make of
// the right size (the server keeps the map that returns, assumption 6):
// filled as it is, by every cluster a new Envoy is sent, it grew again
// and again.
func deltaHeld(req *cache.DeltaRequest, known map[string]string) map[string]string {
	if len(known) == 0 {
		return nil
	}
	if len(req.GetInitialResourceVersions()) > 0 {
		return maps.Clone(known)
	}
	return known
}

// Fetch answers a REST (polling) request with the current content. The
// server returns its answer, or its error, to the client as they are
// (assumption 16).
func (c *resourceCache) Fetch(_ context.Context, req *cache.Request) (cache.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts, ok := c.types[req.GetTypeUrl()]
	if !ok || req.GetVersionInfo() == ts.version {
		return nil, &types.SkipFetchError{}
	}
	sub := newFetchSubscription(req.GetResourceNames())
	return sotwAnswer(req, sub, ts), nil
}

// fetchSubscription is the subscription a REST request describes: the
// names it gives, or everything.
type fetchSubscription map[string]struct{}

func newFetchSubscription(names []string) fetchSubscription {
	s := make(fetchSubscription, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return s
}

func (s fetchSubscription) ReturnedResources() map[string]string     { return nil }
func (s fetchSubscription) SubscribedResources() map[string]struct{} { return s }
func (s fetchSubscription) IsWildcard() bool                         { return len(s) == 0 }

// sotwResponse is one state-of-the-world answer. Its resources are the
// shared encodings; each call builds a new envelope because the server
// writes the stream's nonce into it (assumption 10), and hands the
// response's context to the response callback (assumption 15). The server
// finds the watch a response is for by its request's type URL.
type sotwResponse struct {
	req       *cache.Request
	version   string
	resources []*anypb.Any
	returned  map[string]string
	// sent is the resources' names and versions, in order, for the
	// client registry (see sentListOf). A partial response applies them,
	// and takes gone, the names it makes the client forget, from
	// returned, the subscription's own map, when the server sends it.
	sent    resourceList
	partial bool
	gone    []string
	// onSend, when set, runs when the server takes the response to send
	// it (sharededs.go).
	onSend func()
	// compact is the record of returned when it stands for a content
	// (sotwheld.go).
	compact *sotwCompact
}

// sentKey carries a response's resource names and versions to the stream
// callbacks, so that they need not decode each resource for its name.
type sentKey struct{}

// sentInfo is what sentKey carries.
type sentInfo struct {
	list resourceList
	// full says the response is the whole state of its type, every
	// resource at the response's version.
	full bool
}

// sentListOf returns what a state-of-the-world response's context says
// it sent; false when it says nothing.
func sentListOf(ctx context.Context) (sentInfo, bool) {
	v, ok := ctx.Value(sentKey{}).(sentInfo)
	return v, ok
}

var _ cache.Response = (*sotwResponse)(nil)

func (r *sotwResponse) GetDiscoveryResponse() (*discoveryv3.DiscoveryResponse, error) {
	return &discoveryv3.DiscoveryResponse{VersionInfo: r.version, Resources: r.resources, TypeUrl: r.req.GetTypeUrl()}, nil
}
func (r *sotwResponse) GetRequest() *discoveryv3.DiscoveryRequest { return r.req }
func (r *sotwResponse) GetVersion() (string, error)               { return r.version, nil }
func (r *sotwResponse) GetResponseVersion() string                { return r.version }

// GetReturnedResources is what the client holds once sent this
// response. The SotW server calls it as it sends the response,
// from the stream's goroutine; for a partial response that is when the
// subscription's map is brought up to date (see newSotwPartial). It calls
// it once per response sent, and never for a response it drops.
func (r *sotwResponse) GetReturnedResources() map[string]string {
	if r.onSend != nil { // sharededs.go
		r.onSend()
		r.onSend = nil
	}
	if r.partial && r.compact == nil { // a compact map stands for all it holds
		for i := range r.sent.len() {
			name, v := r.sent.at(i)
			r.returned[name] = v
		}
		for _, name := range r.gone {
			delete(r.returned, name)
		}
	}
	return r.returned
}
func (r *sotwResponse) GetContext() context.Context {
	if r.sent.names == nil && !r.partial {
		return context.Background()
	}
	return context.WithValue(context.Background(), sentKey{}, sentInfo{list: r.sent, full: !r.partial})
}

// deltaResponse is one incremental answer.
type deltaResponse struct {
	req       *cache.DeltaRequest
	version   string
	resources []*discoveryv3.Resource
	removed   []string
	// returned is what the client held (see deltaHeld), brought up to
	// date with the response once, as the server sends it.
	returned map[string]string
	updated  bool
	// base is the content returned stands for when compact; all, the
	// content the client holds whole once sent this, which returned is
	// then made to stand for (heldall.go).
	base, all *heldContent
}

var _ cache.DeltaResponse = (*deltaResponse)(nil)

func (r *deltaResponse) GetDeltaDiscoveryResponse() (*discoveryv3.DeltaDiscoveryResponse, error) {
	return &discoveryv3.DeltaDiscoveryResponse{
		SystemVersionInfo: r.version, Resources: r.resources, RemovedResources: r.removed, TypeUrl: r.req.GetTypeUrl(),
	}, nil
}
func (r *deltaResponse) GetDeltaRequest() *discoveryv3.DeltaDiscoveryRequest { return r.req }
func (r *deltaResponse) GetSystemVersion() (string, error)                   { return r.version, nil }
func (r *deltaResponse) GetResponseVersion() string                          { return r.version }
func (r *deltaResponse) GetContext() context.Context                         { return context.Background() }
func (r *deltaResponse) GetReturnedResources() map[string]string             { return r.GetNextVersionMap() }

// GetNextVersionMap is what the client holds once sent this response:
// go-control-plane's server calls it as it sends the response, from the
// stream's goroutine, and that is when the map is brought up to date.
func (r *deltaResponse) GetNextVersionMap() map[string]string {
	if !r.updated && r.all != nil {
		r.returned = r.all.compactMap() // heldall.go
		r.updated = true
	}
	if !r.updated {
		if r.base != nil {
			r.base.fill(r.returned)
		}
		if r.returned == nil {
			r.returned = make(map[string]string, len(r.resources)+1)
		}
		for _, res := range r.resources {
			r.returned[res.GetName()] = res.GetVersion()
		}
		for _, name := range r.removed {
			delete(r.returned, name)
		}
		r.returned[syncedAt] = r.version
		r.updated = true
	}
	return r.returned
}

package xds

import (
	"slices"
	"unsafe"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// streamState is what the cache knows of one xDS stream, SotW or delta: all
// that the parts of the watch lifecycle keep per stream, in one place. It
// is made when the request callback binds the stream's first request
// (bind) and dropped when the stream closes (forget), after the server has
// cancelled its watches (assumption 3).
type streamState struct {
	key streamKey
	// req is the request the callback bound to the stream that the cache
	// has not been handed yet (bind, streamOf).
	req any
	// gate is what make-before-break knows of the stream's load
	// assignments (makebeforebreak.go).
	gate streamGate
	// due is the load assignments to send its next endpoint watch
	// (sharededs.go).
	due []string
	// routes holds, per route type the stream asked for, the update
	// through which it acknowledged it (0: none yet); nil while it has
	// asked for none. routeNonce is the nonce of the last response of
	// each route type sent on it (routeacks.go).
	routes     map[string]int64
	routeNonce map[string]string
	// unheard is the types of which a watch was held back and then
	// cancelled by the stream's next request before it was answered
	// (watch.go): the names that watch's request subscribed to were
	// never answered, and the next request of the type, which does not
	// name them again, must be compared with everything the client holds.
	unheard map[string]bool
	// stored is the stream's stored watch of each type (watch.go: store,
	// unstore), one at a time (assumption 3): what concerns one stream
	// (a recheck, the load assignments sent again after its clusters)
	// looks at its own watches, not at every stream's.
	stored map[string]*watch
	// vhdsHeld are the route configurations taking their virtual hosts
	// over VHDS that the stream holds (vhds.go): its virtual hosts wait
	// for them.
	vhdsHeld map[string]bool
	// vhdsForget are the route configurations of those sent to it anew,
	// whose virtual hosts it is to be sent again (vhds.go).
	vhdsForget map[string]bool
	// allHeld is, per content key, the content a compact map of the
	// stream's stands for (heldall.go).
	allHeld map[string]*heldContent
	// sotwCompact is, per content key, the records of the maps SotW
	// responses returned that stand for a content (sotwheld.go): the
	// one the server's map is, and those of responses not yet sent.
	sotwCompact map[string][]*sotwCompact
}

// streamFor returns the state of a stream, made if new. The cache's lock
// is held.
func (c *resourceCache) streamFor(key streamKey) *streamState {
	s := c.streams[key]
	if s == nil {
		s = &streamState{key: key}
		c.streams[key] = s
	}
	return s
}

// bind records which stream a request is on; the callbacks call it for
// each request, before the server asks the cache for its watch: the cache
// is told nothing else of which stream asks. It maps the request to its
// stream until the watch the cache creates for the very same request
// (assumptions 1 and 2). Each stream has at most one request between the
// two (assumption 1); a request the server drops after the callback (a
// stale nonce, assumption 4) is forgotten with the next.
func (c *resourceCache) bind(req any, key streamKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streamFor(key)
	if s.req != nil {
		delete(c.bound, s.req)
	}
	c.bound[req] = s
	s.req = req
}

// streamOf returns the stream a request was bound to, forgetting the
// binding; nil for a request no callback saw (REST, tests driving the
// cache alone).
func (c *resourceCache) streamOf(req any) *streamState {
	s, ok := c.bound[req]
	if !ok {
		return nil
	}
	delete(c.bound, req)
	s.req = nil
	return s
}

// forget drops what the cache knows of a closed stream.
func (c *resourceCache) forget(key streamKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streams[key]
	if s == nil {
		return
	}
	delete(c.streams, key)
	if s.req != nil {
		delete(c.bound, s.req)
	}
	for _, p := range c.parts {
		p.closed(c, s)
	}
}

// intern makes the names a request subscribes to the snapshot's own
// strings wherever the snapshot has them. gRPC decodes each name of each
// request into a string of its own, and the server's subscription map and
// the client registry keep the last request's names for as long as the
// stream lives: a SotW Envoy names every load assignment in each request,
// so each stream kept a copy of every name (docs/benchmarks.md, "Issue
// 31"). Made the snapshot's, the request's own strings are garbage once
// it is decoded.
// The callbacks call it before the server builds the subscription from
// the request (assumption 2). A type's content is never written once set,
// so the names are read outside the lock.
//
// It returns the names to keep of the request: the snapshot's own list
// when the request names each of its resources once (a SotW Envoy's
// request for every load assignment), else names, or a copy of them
// when a name had to be replaced. It writes no name in place: the codec
// may have decoded the request's names to a content's own list
// (requestnames.go), which the cache's records and other streams read. The request's slice of
// 10,000 names is then garbage too, once its watch is (withoutNames):
// kept by the client registry, it was 176 KB per SotW stream at 1,000
// Ingresses (docs/benchmarks.md, "Issue 31: fan-out per client").
func (c *resourceCache) intern(typeURL string, names []string) []string {
	if len(names) == 0 {
		return names
	}
	c.mu.Lock()
	ts := c.types[typeURL]
	c.mu.Unlock()
	if ts == nil {
		return names
	}
	if sameList(names, ts.names) {
		// The codec decoded an acknowledgement naming every resource
		// to the content's own list: nothing to look up.
		return ts.names
	}
	lookup := ts.index.bulk(len(names))
	var seen []uint64 // positions named, while every one may be
	if len(names) == len(ts.names) {
		seen = make([]uint64, (len(names)+63)/64)
	}
	out := names
	for i, name := range names {
		j, ok := lookup(name)
		if ok && unsafe.StringData(name) != unsafe.StringData(ts.names[j]) {
			if sameList(out, names) {
				out = slices.Clone(names)
			}
			out[i] = ts.names[j]
		}
		if seen == nil {
			continue
		}
		if !ok || seen[j/64]&(1<<(j%64)) != 0 {
			seen = nil // a name the snapshot lacks, or one named twice
			continue
		}
		seen[j/64] |= 1 << (j % 64)
	}
	if seen != nil {
		return ts.names
	}
	return out
}

// withoutNames is a SotW request as a watch keeps it: without the names
// it subscribes to, which the server has made the subscription of
// (assumption 2) and which nothing reads of a watch's request. A stored
// watch keeps its request until an update answers it, an idle stream's
// until the next change; a SotW Envoy's request names every load
// assignment. The server reads only the type URL of a response's request
// (to find its watch), the callbacks its node (assumption 15).
func withoutNames(req *cache.Request) *cache.Request {
	if len(req.GetResourceNames()) == 0 {
		return req
	}
	return &cache.Request{
		Node: req.GetNode(), TypeUrl: req.GetTypeUrl(), VersionInfo: req.GetVersionInfo(),
		ResponseNonce: req.GetResponseNonce(), ErrorDetail: req.GetErrorDetail(),
	}
}

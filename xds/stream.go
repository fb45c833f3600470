package xds

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
func (c *resourceCache) intern(typeURL string, names []string) {
	if len(names) == 0 {
		return
	}
	c.mu.Lock()
	ts := c.types[typeURL]
	c.mu.Unlock()
	if ts == nil {
		return
	}
	lookup := ts.index.bulk(len(names))
	for i, name := range names {
		if j, ok := lookup(name); ok {
			names[i] = ts.names[j]
		}
	}
}

package xds

// The cache's part of break-after-make (breakaftermake.go): which update
// of the route types (listeners, routes, virtual hosts) each ADS stream
// has acknowledged, so that the Server lets a removed cluster go once
// every stream routes without it.
//
// Updates are numbered (seq). A stream is known to have acknowledged a
// route type through seq n when the cache stored, rather than answered, a
// watch of that type on it at n: a stored watch is a request (ACK or NACK;
// a SotW NACK's version is rewritten to the rejected one, so it is stored
// too) from a client that holds the current content, and go-control-plane
// opens it only after the response before it (assumptions 1, 3). While
// that watch stays stored (no later update had anything for it) the stream
// stays in sync, through the latest update. A held watch
// (makebeforebreak.go) is not in sync: its routes have not been sent.
//
// A stored watch counts only if its request answers the last response of
// its type sent on the stream, by nonce: the response callback records
// each response's nonce before the response is sent (assumption 15). A
// delta request that only changes the subscription while a response is on
// its way (the delta server checks no nonce, assumption 4) finds the
// client state the server already updated for that response, and would
// look in sync before the client has applied it. (SotW requests with
// another nonce never reach the cache, assumption 4.) A stream whose
// responses nobody recorded (tests driving the cache alone) is taken at
// its watches' word.
type routeAcks struct {
	seq int64 // the last update's number
	// Per stream, what it asked for and acknowledged is its stream's
	// routes and routeNonce (stream.go).
	//
	// wait, when not 0, is the update the Server waits for every stream
	// to have acknowledged; done is called (holding the cache's lock)
	// once they have, and wait cleared.
	wait int64
	done func()
}

var _ watchPart = (*routeAcks)(nil)

// updated numbers the update.
func (a *routeAcks) updated(*resourceCache, []typeChange) bool {
	a.seq++
	return false
}

func (a *routeAcks) holds(*resourceCache, *watch) bool       { return false }
func (a *routeAcks) owes(*resourceCache, *watch) xdsResponse { return nil }

// settled records a route-type request, answered or stored; and a held
// watch released with nothing to send, which is in sync.
func (a *routeAcks) settled(c *resourceCache, at step, w *watch, r xdsResponse) {
	switch {
	case at == stepRequest && heldBack(w.typeURL):
		c.sawRoutes(w.stream.key, w.typeURL, r == nil && !w.held, w.proto.nonce(w))
	case at == stepRelease && r == nil:
		c.checkRoutesAcked()
	}
}

// closed: the stream gone may be the one waited for.
func (a *routeAcks) closed(c *resourceCache, s *streamState) {
	if s.routes != nil {
		c.checkRoutesAcked()
	}
}

// sawRoutes records a route-type request of a stream: that the stream
// asks for the type, and, when the cache stored its watch unanswered and
// not held, that it holds the type's current content; nonce is the
// request's.
func (c *resourceCache) sawRoutes(key streamKey, typeURL string, synced bool, nonce string) {
	s := c.streamFor(key)
	if last, ok := s.routeNonce[typeURL]; ok && last != nonce {
		synced = false
	}
	m := s.routes
	if m == nil {
		m = map[string]int64{}
		s.routes = m
	}
	if synced {
		m[typeURL] = c.acks.seq
		c.checkRoutesAcked()
	} else if _, ok := m[typeURL]; !ok {
		m[typeURL] = 0
	}
}

// lastUpdate is the last update's number.
func (c *resourceCache) lastUpdate() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acks.seq
}

// sentRoutes records the nonce of a response about to be sent on a stream
// (the response callbacks call it).
func (c *resourceCache) sentRoutes(key streamKey, typeURL, nonce string) {
	if !heldBack(typeURL) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.streamFor(key)
	if s.routeNonce == nil {
		s.routeNonce = map[string]string{}
	}
	s.routeNonce[typeURL] = nonce
}

// routesAckedThrough returns the update through which every stream has
// acknowledged every route type it asks for, and whether any stream asks
// for one (when none does, the latest update).
func (c *resourceCache) routesAckedThrough() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ackedThrough()
}

func (c *resourceCache) ackedThrough() (int64, bool) {
	through := c.acks.seq
	interested := false
	for _, s := range c.streams {
		if s.routes != nil {
			interested = true
			break
		}
	}
	if !interested {
		return through, false
	}
	type watchOf struct {
		key     streamKey
		typeURL string
	}
	current := map[watchOf]bool{}
	for key, ws := range c.watches {
		if heldBack(keyType(key)) {
			for _, w := range ws {
				if w.stream != nil && !w.held {
					current[watchOf{w.stream.key, w.typeURL}] = true
				}
			}
		}
	}
	for key, s := range c.streams {
		for typeURL, at := range s.routes {
			if !current[watchOf{key, typeURL}] && at < through {
				through = at
			}
		}
	}
	return through, true
}

// awaitRoutes has done called once every stream has acknowledged the route
// types through update seq: at once if they have.
func (c *resourceCache) awaitRoutes(seq int64, done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acks.wait, c.acks.done = seq, done
	c.checkRoutesAcked()
}

// checkRoutesAcked calls the waiting done if the streams have acknowledged
// what it waits for. The cache's lock is held.
func (c *resourceCache) checkRoutesAcked() {
	if c.acks.wait == 0 {
		return
	}
	if through, _ := c.ackedThrough(); through >= c.acks.wait {
		done := c.acks.done
		c.acks.wait, c.acks.done = 0, nil
		done()
	}
}

package xds

import (
	"testing"
)

// TestRouteAcksFollowEachStream: the part says through which update every
// stream has acknowledged the route types it asks for. A route change
// sent to a stream is not acknowledged until the stream's next request of
// the routes (its ACK, a watch the cache stores); a stream that never
// acknowledges holds it back until it closes; the Server's wait
// (awaitRoutes) ends at the last of those. Over both protocols.
func TestRouteAcksFollowEachStream(t *testing.T) {
	for _, delta := range []bool{false, true} {
		t.Run(map[bool]string{false: protocolSotW, true: protocolDelta}[delta], func(t *testing.T) {
			s := quietServer()
			rc := s.cache
			if _, interested := rc.routesAckedThrough(); interested {
				t.Fatal("no stream, yet some asks for routes")
			}
			publishOK(t, s, switched(t, "a", "a", "b"))
			fast := newADSStream(delta, 1, "a", "b")
			fast.open(t, rc)
			slow := newADSStream(delta, 2, "a", "b")
			slow.open(t, rc)
			through, interested := rc.routesAckedThrough()
			if first := rc.lastUpdate(); !interested || through != first {
				t.Fatalf("both streams in sync: acknowledged through %d (interested %v), want %d", through, interested, first)
			}

			before := rc.lastUpdate()
			publishOK(t, s, switched(t, "b", "a", "b")) // the route changes, no cluster is added
			changed := rc.lastUpdate()
			done := false
			rc.mu.Lock()
			rc.acks.wait, rc.acks.done = changed, func() { done = true }
			rc.checkRoutesAcked()
			rc.mu.Unlock()
			if through, _ := rc.routesAckedThrough(); through != before || done {
				t.Fatalf("the new routes sent, not acknowledged: through %d (done %v), want %d", through, done, before)
			}

			fast.routes.drain(t, rc) // takes the routes and acknowledges them
			if through, _ := rc.routesAckedThrough(); through != before || done {
				t.Fatalf("one stream acknowledged: through %d (done %v), want %d", through, done, before)
			}
			slow.routes.slow = true
			slow.routes.drain(t, rc) // takes the routes, acknowledges later
			if through, _ := rc.routesAckedThrough(); through != before || done {
				t.Fatalf("the slow stream has not acknowledged: through %d (done %v), want %d", through, done, before)
			}
			slow.routes.drain(t, rc) // its ACK
			if through, _ := rc.routesAckedThrough(); through != changed || !done {
				t.Fatalf("every stream acknowledged: through %d (done %v), want %d", through, done, changed)
			}

			// A stream that never acknowledges is waited for until it closes.
			publishOK(t, s, switched(t, "a", "a", "b"))
			last := rc.lastUpdate()
			fast.routes.drain(t, rc)
			slow.routes.slow = true
			slow.routes.drain(t, rc)
			done = false
			rc.awaitRoutes(last, func() { done = true })
			if done {
				t.Fatal("the wait ended with the slow stream's acknowledgement due")
			}
			rc.forget(slow.key)
			if !done {
				t.Fatal("the wait did not end when the stream it waited for closed")
			}
		})
	}
}

package xds

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Virtual host discovery (VHDS). When the translator sends the plain-HTTP
// virtual hosts as resources of their own (translate/envoy/vhds.go), an
// Envoy that gets a route configuration saying "my virtual hosts come over
// VHDS" subscribes to the virtual host type over delta xDS. Envoy 1.40
// asks as a wildcard (no name: its mux does not send a namespace's name,
// checked with a real Envoy) and takes every virtual host whose name is
// "http/<host>", the namespace being what comes before a name's last "/"
// (Envoy's source/common/router/vhds.cc and its watch map's namespace
// matching). Other clients (e2e/adsclient, the load command's) subscribe
// to the route configuration's name, as a namespace: the cache answers
// that with every resource of the namespace. Either first request is
// answered even with nothing: Envoy's route configuration waits for that
// answer before the listener that uses it is ready.

// vhds is the part (watch.go) that makes the virtual host type
// namespaced: the lifecycle's answers then read a name subscribed to as
// every resource of that namespace (everything, wants, deltaSince,
// deltaNow in cache.go).
type vhds struct{}

var _ watchPart = vhds{}

// updated marks a new virtual host content namespaced.
func (vhds) updated(_ *resourceCache, changes []typeChange) bool {
	for _, ch := range changes {
		if ch.typeURL == resource.VirtualHostType {
			ch.state.namespaced = true
		}
	}
	return false
}

// holds keeps a delta stream's virtual hosts from it until it holds the
// route configurations that take them over VHDS. Envoy subscribes to
// virtual hosts for a route configuration when it takes one saying they
// come over VHDS, and a subscription started after the virtual hosts
// came waits for more, as long as the initial fetch timeout, its listener
// warming all along: so it was when a delta Envoy's routes went back from
// route scopes to one table, the new listener's route configuration
// arriving after the virtual hosts, sent at once to the subscription its
// old one left (docs/xds-cache.md).
//
// It also makes the stream's subscription forget the virtual hosts of a
// route configuration the stream has just been sent anew (vhdsForget),
// before the watch is answered from it: Envoy's route configuration of
// that name may be a new one, whose VHDS subscription holds none of them
// (the one that did is gone with its listener, and Envoy does not tell),
// so they are all sent again.
func (vhds) holds(c *resourceCache, w *watch) bool {
	if w.typeURL != resource.VirtualHostType || !w.stream.key.delta {
		return false
	}
	if s := w.stream; len(s.vhdsForget) > 0 {
		known := expandHeld(w) // heldall.go
		for name := range known {
			if s.vhdsForget[namespaceOf(name)] {
				delete(known, name)
			}
		}
		delete(known, syncedAt)
		s.vhdsForget = nil
	}
	routes := c.types[deltaRouteKey]
	if routes == nil {
		return false
	}
	for _, name := range routes.vhdsRoutes {
		if !w.stream.vhdsHeld[name] && !routeHeld(w.stream, name) {
			return true
		}
	}
	return false
}

// routeHeld says whether a stream's stored route watch holds the route
// configuration name, and notes it if so: a reconnecting Envoy names it
// among its initial versions, and when its request came before the first
// content, nothing was answered for it to be noted at (settled).
func routeHeld(s *streamState, name string) bool {
	rw := s.stored[deltaRouteKey]
	if rw == nil {
		return false
	}
	if _, ok := rw.sub.ReturnedResources()[name]; !ok {
		return false
	}
	if s.vhdsHeld == nil {
		s.vhdsHeld = map[string]bool{}
	}
	s.vhdsHeld[name] = true
	return true
}

func (vhds) owes(*resourceCache, *watch) xdsResponse { return nil }

// settled follows which route configurations taking their virtual hosts
// over VHDS a delta stream holds: those its route request says it holds
// (an unsubscription drops one, a reconnection's initial versions hold
// one), then those its answer sends or removes; and releases its virtual
// hosts once it holds them all.
func (vhds) settled(c *resourceCache, at step, w *watch, r xdsResponse) {
	if w.key != deltaRouteKey {
		return
	}
	routes := c.types[deltaRouteKey]
	if routes == nil || len(routes.vhdsRoutes) == 0 && len(w.stream.vhdsHeld) == 0 {
		return
	}
	s := w.stream
	if at == stepRequest {
		known := w.sub.ReturnedResources()
		s.vhdsHeld = map[string]bool{}
		for _, name := range routes.vhdsRoutes {
			if _, ok := known[name]; ok {
				s.vhdsHeld[name] = true
			}
		}
	}
	if resp, ok := r.(*deltaResponse); ok && resp != nil {
		if s.vhdsHeld == nil {
			s.vhdsHeld = map[string]bool{}
		}
		for _, res := range resp.resources {
			name := res.GetName()
			if !slices.Contains(routes.vhdsRoutes, name) {
				continue
			}
			if !s.vhdsHeld[name] {
				if s.vhdsForget == nil {
					s.vhdsForget = map[string]bool{}
				}
				s.vhdsForget[name] = true
			}
			s.vhdsHeld[name] = true
		}
		for _, name := range resp.removed {
			delete(s.vhdsHeld, name)
		}
	}
	if vw, vh := s.stored[resource.VirtualHostType], c.types[resource.VirtualHostType]; vw != nil && vw.held && vh != nil {
		c.release(vw, vh)
	}
}

func (vhds) closed(*resourceCache, *streamState) {}

// namespaceOf is the namespace of a resource name, as Envoy's namespace
// matching has it: what comes before its last "/", or "" for none.
func namespaceOf(name string) string {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return ""
	}
	return name[:i]
}

// wants says whether a subscription naming subscribed asks for the
// resource name: by name, or, for a namespaced type, by its namespace.
func (ts *typeSnapshot) wants(subscribed map[string]struct{}, name string) bool {
	if _, ok := subscribed[name]; ok {
		return true
	}
	if !ts.namespaced {
		return false
	}
	_, ok := subscribed[namespaceOf(name)]
	return ok
}

// inNamespaces is every resource name of ts a subscription naming
// subscribed asks for (ts being namespaced), and the names it gives that
// are no namespace: a name subscribed by itself.
func inNamespaces(ts *typeSnapshot, subscribed map[string]struct{}) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, name := range ts.names {
			if ts.wants(subscribed, name) && !yield(name) {
				return
			}
		}
	}
}

// discoveredConsistent checks that every virtual host sent over VHDS is
// named in the namespace of a route configuration of the snapshot, which
// is the only way an Envoy can ask for it.
func discoveredConsistent(vhosts, routes *typeSnapshot) error {
	for _, name := range vhosts.names {
		ns := namespaceOf(name)
		if _, ok := routes.index.lookup(ns); !ok {
			return fmt.Errorf("virtual host %q is in no route configuration's namespace (%q)", name, ns)
		}
	}
	return nil
}

// forgetResubscribed drops from what a delta client holds (known, the
// map the server keeps: deltaHeld) every resource of a namespace the
// request subscribes to. A client subscribing to a namespace holds
// nothing of it: e2e/adsclient and the load command's clients subscribe
// to a route configuration's namespace when it takes its virtual hosts
// over VHDS, and drop them all when it stops (the routes going to route
// scopes and back, deltaroutes.go); Envoy's VHDS asks as a wildcard
// instead (holds, above, is its case). The server forgets the namespace's
// name on the unsubscription but not the names of what it held, which
// without this look held at their versions, and are not sent again. Not
// on a stream's first request, whose initial versions are what the client
// does hold.
func forgetResubscribed(req *cache.DeltaRequest, known map[string]string) {
	subscribe := req.GetResourceNamesSubscribe()
	if len(subscribe) == 0 || len(known) == 0 || len(req.GetInitialResourceVersions()) > 0 {
		return
	}
	namespaces := make(map[string]bool, len(subscribe))
	for _, name := range subscribe {
		namespaces[name] = true
	}
	dropped := false
	for name := range known {
		if name != syncedAt && namespaces[namespaceOf(name)] {
			delete(known, name)
			dropped = true
		}
	}
	if dropped {
		delete(known, syncedAt) // no longer complete for any version
	}
}

package xds

import (
	"fmt"
	"iter"
	"strings"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Virtual host discovery (VHDS). When the translator sends the plain-HTTP
// virtual hosts as resources of their own (translate/envoy/vhds.go), an
// Envoy that gets a route configuration saying "my virtual hosts come over
// VHDS" subscribes, over delta xDS, to that route configuration's name
// ("http") as a namespace: Envoy's VHDS subscription asks for its route
// configuration's name with namespace matching on, and takes every
// virtual host whose name is "http/<host>", the namespace being what
// comes before a name's last "/" (Envoy's source/common/router/vhds.cc,
// and its watch map's namespace matching). The cache answers such a
// subscription with every resource of the namespace, and, as it does for
// a wildcard subscription, answers its first request even with nothing:
// Envoy's route configuration waits for that answer before the listener
// that uses it is ready.

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

func (vhds) holds(*resourceCache, *watch) bool                 { return false }
func (vhds) owes(*resourceCache, *watch) xdsResponse           { return nil }
func (vhds) settled(*resourceCache, step, *watch, xdsResponse) {}
func (vhds) closed(*resourceCache, *streamState)               {}

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

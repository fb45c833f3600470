package xds

import (
	"github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Route scopes (serve --route-scopes, translate/envoy/scopes.go): the
// plain-HTTP listener's scopes come over SRDS, each naming a route
// configuration sent over RDS as any other. Envoy subscribes to SRDS with
// no names and takes each state-of-the-world answer as every scope there
// is (ScopedRdsConfigSubscription drops the scopes an answer lacks), as
// it takes listeners and clusters: a SotW answer for scopes must hold them
// all, which go-control-plane's rule for full answers does not list.

// scopes is the part (watch.go) that says which types' SotW answers hold
// the full state: it marks each new content (typeSnapshot.fullState),
// which the SotW protocol reads.
type scopes struct{}

var _ watchPart = scopes{}

func (scopes) updated(_ *resourceCache, changes []typeChange) bool {
	for _, ch := range changes {
		ch.state.fullState = fullStateInSotw(ch.typeURL)
	}
	return false
}

func (scopes) holds(*resourceCache, *watch) bool                 { return false }
func (scopes) owes(*resourceCache, *watch) xdsResponse           { return nil }
func (scopes) settled(*resourceCache, step, *watch, xdsResponse) {}
func (scopes) closed(*resourceCache, *streamState)               {}

// fullStateInSotw says whether a state-of-the-world answer of a type must
// hold every resource the client asks for (or all, for a wildcard), rather
// than those that changed.
func fullStateInSotw(typeURL string) bool {
	return typeURL == resource.ScopedRouteType || cache.ResourceRequiresFullStateInSotw(typeURL)
}

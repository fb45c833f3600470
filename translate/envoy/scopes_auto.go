package envoy

import "math/bits"

// Route scopes sized to the hosts (serve's default, --route-scopes auto,
// issue 31). Scopes pay on every request (the hash of its Host,
// routeScopeExpression) for what they save on every change (Envoy rebuilds
// one scope's hosts, not the table of every host). Below a number of hosts
// the whole table is cheap to rebuild and the price per request is not
// worth paying, so there are none; past it, there are about one per
// HostsPerAutoRouteScope hosts, a power of two, so that a change rebuilds
// a few dozen hosts in each Envoy whatever the number of Ingresses. Where
// the line is and why: docs/benchmarks.md, "Issue 31: the shipped
// defaults".

const (
	// AutoRouteScopesFrom is the number of virtual hosts from which the
	// automatic sizing splits the routes into scopes.
	AutoRouteScopesFrom = 4000
	// HostsPerAutoRouteScope is about how many hosts each scope holds
	// past AutoRouteScopesFrom.
	HostsPerAutoRouteScope = 20
)

// AutoRouteScopes is the number of route scopes for hosts virtual hosts:
// 0 below AutoRouteScopesFrom, else the power of two nearest above
// hosts / HostsPerAutoRouteScope, at most MaxRouteScopes.
func AutoRouteScopes(hosts int) int {
	if hosts < AutoRouteScopesFrom {
		return 0
	}
	want := (hosts + HostsPerAutoRouteScope - 1) / HostsPerAutoRouteScope
	n := 1 << bits.Len(uint(want-1))
	return min(n, MaxRouteScopes)
}

// resizeScopes sets the number of route scopes for a render of hosts
// virtual hosts, under Options.AutoRouteScopes. It grows as soon as the
// hosts ask for more, but shrinks only once they are half of what would
// still ask for the current number, so that a number of hosts moving
// about a boundary does not change it back and forth: each change of it
// is a new listener in every Envoy (its connections drained) and every
// route configuration sent again. A change forgets what the routes were
// rendered with, since a virtual host's rendering reads the number
// (errorpages.go).
func (c *Renderer) resizeScopes(hosts int) {
	n := c.routeScopes
	if want := AutoRouteScopes(hosts); want > n || AutoRouteScopes(2*hosts) < n {
		n = want
	}
	if n == c.routeScopes {
		return
	}
	c.routeScopes = n
	c.lastHTTP = httpRoutes{}
	c.scopes, c.scopeSettings, c.scopeLists, c.scopeTable = nil, nil, nil, nil
}

// RouteScopes is the number of route scopes of the last render (0 for
// none).
func (c *Renderer) RouteScopes() int { return c.routeScopes }

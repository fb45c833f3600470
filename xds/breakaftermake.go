package xds

import (
	"context"
	"slices"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	"github.com/ingress-xds/ingress-xds/internal/listdiff"
	"github.com/ingress-xds/ingress-xds/translate"
	envoyres "github.com/ingress-xds/ingress-xds/translate/envoy"
)

// Break-after-make. A cluster that a change removes is still named by the
// routes an Envoy runs until it has applied the change's routes; removed
// from Envoy at once (delta: removed_resources; state of the world: absent
// from the full cluster state), it answers 503 (no cluster) for every
// request those routes send it in between: a few per backend switch in
// the load command's Envoy phase (docs/benchmarks.md, "At 1,000 Ingresses,
// before (the bootstrap of `c7ade98`)"). So a cluster the
// translator no longer produces is kept in what is published, with its
// load assignment, until every ADS stream that asks for the route types
// (listeners, routes, virtual hosts) has acknowledged, ACK or NACK, the
// route types of the publish that removed it; then the Server publishes
// again without it. The route types a stream is sent are already held until
// the stream has the clusters they add (makebeforebreak.go), so that order
// is: new cluster, its endpoints, the routes, their acknowledgement, and
// only then the old cluster's removal.
//
// It is done at publish level, one content for every Envoy, rather than per
// stream in the cache: a per-stream removal would make each stream's state
// of the world cluster answer its own list of 100,000 clusters and its own
// version, where one shared encoding serves all of them now; a cluster
// kept a round trip longer than some Envoy needs it costs nothing but its
// place in the list. A stream that does not acknowledge within keepAtMost
// (a stuck client; a dead one is dropped by the keepalive sooner) does not
// keep a cluster longer: the cluster goes then, and that stream may see the
// 503s this avoids for the others. Without any stream that asks for route
// types (no Envoy connected, or tests driving the cache alone), nothing is
// kept: a removal is published as it is.
//
// What a stream has acknowledged is read from its watches (the cache's
// side, below): a watch of a route type that the cache stores rather than
// answers is a request, an ACK or a NACK, from a client holding the
// current content of that type (else it would have been answered), which
// go-control-plane opens only after the response before it (one watch per
// type and stream, the previous one cancelled first: assumptions 1, 3).

// keepAtMost bounds how long a removed cluster is kept for a stream that
// has not acknowledged the routes that stopped using it. Long enough for an
// Envoy applying a large state-of-the-world cluster update (seconds at
// 10,000 Ingresses: docs/benchmarks.md, "At 10,000 Ingresses", issue 18)
// and for the
// keepalive to drop a dead connection (30 s + 10 s); short enough that a
// stuck client does not keep every removed Service for the others.
const keepAtMost = 60 * time.Second

// keepRouteFormsFor is how long route scopes or a VHDS form the translator
// no longer produces are kept (keptCluster), whether or not the streams
// have acknowledged the routes without them: an acknowledgement says the
// new listener was taken, not that it is warm, and the listener that used
// them then drains its connections for Envoy's drain time (15 s in the
// manifests, deploy/envoy.yaml); a draining connection routes through them
// until it closes, and Envoy applies their removal to it at once.
const keepRouteFormsFor = 20 * time.Second

// releaseQuiet is how long the removal of acknowledged clusters waits for
// another publish to carry it: in state of the world a cluster change sends
// every cluster (100,000 at 10,000 Ingresses), and a publish of its own for
// each removal would send them twice per backend switch. A change that
// comes meanwhile lets them go with it; after this long without one, the
// Server publishes for them alone.
const releaseQuiet = time.Second

// keptCluster is a cluster the translator removed that is still published;
// or, with scope set, a route scope it removed, with the route
// configuration the scope names. When the HTTP listener goes back from
// route scopes to one route configuration (translate/envoy/scopes_auto.go),
// the listener that uses the scopes serves until Envoy has the new one
// warmed; a state-of-the-world answer without them, or their delta
// removal, would leave it with no scope to route through (404) in
// between, and its connections then drain through them. So they are
// kept, for keepRouteFormsFor.
//
// With deltaRoute set, it is a route configuration's form for delta
// Envoys, its virtual hosts over VHDS (deltaroutes.go), that the
// translator no longer produces (the HTTP listener going to route scopes):
// Envoy applies the removal of virtual hosts at once, to the route
// configuration of the listener that serves until the new one is warm,
// and then drains its connections, which would then answer 404. So it is
// kept, with its virtual hosts, for keepRouteFormsFor.
type keptCluster struct {
	cluster envoyres.Cluster
	scope   *routev3.ScopedRouteConfiguration
	route   *routev3.RouteConfiguration
	// deltaRoute and vhosts are a kept VHDS form.
	deltaRoute *routev3.RouteConfiguration
	vhosts     []*routev3.VirtualHost
	// seq is the cache update that removed it from what the translator
	// produces (0 until that update is made).
	seq      int64
	deadline time.Time
}

// keptScopeKey is a kept scope's key among the kept clusters' names.
func keptScopeKey(name string) string { return "scope\x00" + name }

// keptVHDSKey is a kept VHDS form's key among the kept clusters' names.
func keptVHDSKey(routeName string) string { return "vhds\x00" + routeName }

// keeping is the Server's part: what is kept, and the last translator
// output, which a publish that lets clusters go publishes again.
type keeping struct {
	input *translate.Resources
	kept  map[string]*keptCluster
	// served is the last composition of input with the kept clusters, so
	// that an unchanged one is handed to the snapshotter as the very same
	// lists (which it recognises without looking into them).
	served       *translate.Resources
	servedOf     *translate.Resources
	servedKept   []string
	releaseArmed bool
	lastPublish  time.Time
}

// withKept returns what to publish for r: r, plus the clusters removed
// from the previous input that streams may still route to, and their load
// assignments; and the kept set that publishing it makes current.
func (s *Server) withKept(r *translate.Resources) (*translate.Resources, map[string]*keptCluster) {
	k := &s.keep
	changed := k.input != nil && !sameClusters(k.input.Clusters, r.Clusters)
	scopesChanged := k.input != nil && !sameScopes(k.input.ScopedRoutes, r.ScopedRoutes)
	vhdsChanged := k.input != nil && !sameRouteNames(k.input.DeltaRoutes, r.DeltaRoutes)
	if len(k.kept) == 0 && !changed && !scopesChanged && !vhdsChanged {
		return r, nil // the common case: nothing to read of the streams
	}
	kept := make(map[string]*keptCluster, len(k.kept))
	through, interested := s.cache.routesAckedThrough()
	now := s.now()
	for name, kc := range k.kept {
		if kc.deltaRoute != nil || kc.scope != nil {
			if interested && now.Before(kc.deadline) {
				kept[name] = kc // for keepRouteFormsFor, acknowledged or not
			}
			continue
		}
		if !interested || (kc.seq > 0 && kc.seq <= through) || !now.Before(kc.deadline) {
			continue // acknowledged, or kept long enough
		}
		kept[name] = kc
	}
	if prev := k.input; changed {
		var removed []envoyres.Cluster
		added := map[string]bool{}
		listdiff.Walk(prev.Clusters, r.Clusters,
			func(int, int) {},
			func(i int) { added[r.Clusters[i].GetName()] = true },
			func(j int) { removed = append(removed, prev.Clusters[j]) })
		for name := range added {
			delete(kept, name) // produced again
		}
		for _, c := range removed {
			if name := c.GetName(); interested && !added[name] {
				kept[name] = &keptCluster{cluster: c, deadline: now.Add(keepAtMost)}
			}
		}
	}
	if prev := k.input; scopesChanged {
		keepRemovedScopes(prev, r, kept, interested, now)
	}
	if prev := k.input; vhdsChanged {
		keepRemovedVHDS(prev, r, kept, interested, now)
	}
	if len(kept) == 0 {
		return r, kept
	}
	return s.compose(r, kept), kept
}

func sameClusters(a, b []envoyres.Cluster) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func sameScopes(a, b []*routev3.ScopedRouteConfiguration) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// keepRemovedScopes adds to kept the route scopes of prev that r no
// longer has, each with its route configuration, and takes off those r
// has again.
func keepRemovedScopes(prev, r *translate.Resources, kept map[string]*keptCluster, interested bool, now time.Time) {
	stillThere := map[string]bool{}
	for _, sc := range r.ScopedRoutes {
		stillThere[sc.GetName()] = true
		delete(kept, keptScopeKey(sc.GetName()))
	}
	if !interested {
		return
	}
	routes := map[string]*routev3.RouteConfiguration{}
	for _, sc := range prev.ScopedRoutes {
		if !stillThere[sc.GetName()] {
			routes[sc.GetRouteConfigurationName()] = nil
		}
	}
	if len(routes) == 0 {
		return
	}
	for _, rc := range prev.Routes {
		if _, ok := routes[rc.GetName()]; ok {
			routes[rc.GetName()] = rc
		}
	}
	for _, sc := range prev.ScopedRoutes {
		if rc := routes[sc.GetRouteConfigurationName()]; rc != nil && !stillThere[sc.GetName()] {
			kept[keptScopeKey(sc.GetName())] = &keptCluster{scope: sc, route: rc, deadline: now.Add(keepRouteFormsFor)}
		}
	}
}

// sameRouteNames says whether two lists of route configurations have the
// same names, in order.
func sameRouteNames(a, b []*routev3.RouteConfiguration) bool {
	return slices.EqualFunc(a, b, func(x, y *routev3.RouteConfiguration) bool { return x.GetName() == y.GetName() })
}

// keepRemovedVHDS adds to kept the VHDS forms of prev that r no longer
// has, each with its virtual hosts, and takes off those r has again.
func keepRemovedVHDS(prev, r *translate.Resources, kept map[string]*keptCluster, interested bool, now time.Time) {
	stillThere := map[string]bool{}
	for _, rc := range r.DeltaRoutes {
		stillThere[rc.GetName()] = true
		delete(kept, keptVHDSKey(rc.GetName()))
	}
	if !interested {
		return
	}
	for _, rc := range prev.DeltaRoutes {
		name := rc.GetName()
		if stillThere[name] {
			continue
		}
		kc := &keptCluster{deltaRoute: rc, deadline: now.Add(keepRouteFormsFor)}
		for _, vh := range prev.VirtualHosts {
			if namespaceOf(vh.GetName()) == name {
				kc.vhosts = append(kc.vhosts, vh)
			}
		}
		kept[keptVHDSKey(name)] = kc
	}
}

// compose is r with the kept clusters after its own, and the load
// assignments of those whose assignment r no longer has, as last published.
func (s *Server) compose(r *translate.Resources, kept map[string]*keptCluster) *translate.Resources {
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range kept {
			if !yield(name) {
				return
			}
		}
	})
	k := &s.keep
	if k.servedOf == r && slices.Equal(k.servedKept, names) {
		return k.served
	}
	out := *r
	out.Clusters = make([]envoyres.Cluster, 0, len(r.Clusters)+len(names))
	out.Clusters = append(out.Clusters, r.Clusters...)
	need := map[string]bool{}
	routeNames := map[string]bool{}
	for _, rc := range r.Routes {
		routeNames[rc.GetName()] = true
	}
	for _, name := range names {
		if kc := kept[name]; kc.deltaRoute != nil {
			out.DeltaRoutes = append(slices.Clip(out.DeltaRoutes), kc.deltaRoute)
			out.VirtualHosts = append(slices.Clip(out.VirtualHosts), kc.vhosts...)
			continue
		}
		if kc := kept[name]; kc.scope != nil {
			out.ScopedRoutes = append(slices.Clip(out.ScopedRoutes), kc.scope)
			if !routeNames[kc.route.GetName()] {
				routeNames[kc.route.GetName()] = true
				out.Routes = append(slices.Clip(out.Routes), kc.route)
			}
			continue
		}
		c := kept[name].cluster
		out.Clusters = append(out.Clusters, c)
		if eds, ok := edsNameOf(c); ok { // sharededs.go
			need[eds] = true
		}
	}
	for _, la := range r.Endpoints {
		delete(need, la.GetClusterName())
	}
	if len(need) > 0 {
		prev := &s.snapshots.prev[types.Endpoint]
		out.Endpoints = slices.Clip(r.Endpoints)
		for _, eds := range slices.Sorted(func(yield func(string) bool) {
			for n := range need {
				if !yield(n) {
					return
				}
			}
		}) {
			j, ok := prev.index.lookup(eds)
			if !ok {
				continue // cannot happen: it was published with its cluster
			}
			if la, ok := prev.items[j].(envoyres.LoadAssignment); ok {
				out.Endpoints = append(out.Endpoints, la)
			}
		}
	}
	k.served, k.servedOf, k.servedKept = &out, r, names
	return &out
}

// keptPublished makes a publish's kept set current, seq being the cache
// update that published it, and asks the cache to say when the streams
// have acknowledged the route types through the oldest kept, or arms the
// bound.
func (s *Server) keptPublished(r *translate.Resources, kept map[string]*keptCluster, seq int64) {
	k := &s.keep
	k.input = r
	k.kept = kept
	k.lastPublish = s.now()
	if len(kept) == 0 {
		k.served, k.servedOf, k.servedKept = nil, nil, nil
		return
	}
	oldest, first := int64(0), time.Time{}
	for _, kc := range kept {
		if kc.seq == 0 {
			kc.seq = seq
		}
		if oldest == 0 || kc.seq < oldest {
			oldest = kc.seq
		}
		if first.IsZero() || kc.deadline.Before(first) {
			first = kc.deadline
		}
	}
	s.cache.awaitRoutes(oldest, s.releaseKeptSoon)
	if !k.releaseArmed {
		k.releaseArmed = true
		// At the deadline, not after it: a timer never fires early, and
		// withKept reads the same clock.
		s.clock.AfterFunc(max(first.Sub(s.now()), 0), func() {
			s.mu.Lock()
			s.keep.releaseArmed = false
			s.mu.Unlock()
			s.releaseKept()
		})
	}
}

// releaseKeptSoon is the cache's call when the streams have acknowledged
// the route types through a kept cluster's removal; it holds the cache's
// lock, which Publish takes under the Server's, hence the timer.
func (s *Server) releaseKeptSoon() { s.clock.AfterFunc(releaseQuiet, s.releaseKept) }

// releaseKept publishes the last input again, which lets go the kept
// clusters that may go now, once no publish came for releaseQuiet.
func (s *Server) releaseKept() {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := &s.keep
	if len(k.kept) == 0 || k.input == nil {
		return
	}
	if wait := releaseQuiet - s.now().Sub(k.lastPublish); wait > 0 {
		s.clock.AfterFunc(wait, s.releaseKept)
		return
	}
	if _, err := s.publishLocked(context.Background(), k.input); err != nil {
		// The same input was published before; only the kept clusters'
		// going differs, which validation does not look at.
		s.log.Error("publishing without the removed clusters", "error", err)
	}
}

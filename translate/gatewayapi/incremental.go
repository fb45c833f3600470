package gatewayapi

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A change of HTTPRoutes alone edits the last build in place of a new
// one, as the Ingress front-end touches only the hosts a change names:
// the changed Routes are detached (their hits, hostnames, status facts,
// listener counts and problems) and attached again, and only the hosts
// they were or are attached to are made again and spliced into the
// last IR's list, with the clusters, backends and certificates those
// hosts start or stop using. Every Route, listener group and other host
// is left as it was, so a Route change costs that Route's work and its
// hosts'.
//
// It applies where the changed Routes' hits could not change another
// host's routes or problems: each is of a host by name (a wildcard or no
// hostname reaches every host under it), in a group of HTTPRoutes alone
// (oneKindPerHost weighs HTTPRoutes against GRPCRoutes there), not
// passed through (passThrough weighs the host's HTTPS Routes against its
// TLSRoute). Anything else, and any change of another kind of object,
// is a full build, which is what the result must always equal
// (TestBuilderMatchesFreshBuild, TestBuilderEditsRoutesAsFreshBuilds).

// routeChange is one HTTPRoute's change: the object before and after
// (nil: none).
type routeChange struct {
	key, namespace, name string
	old, now             *gwapiv1.HTTPRoute
}

// onlyHTTPRoutes says whether st differs from what the last build read
// in its HTTPRoutes alone: every other part the same (the maps the very
// same, the lists of the same objects, or for GatewayClasses and
// Gateways of objects alike in all the build reads of them: the status
// the leader writes after each Route change makes a new Gateway).
func onlyHTTPRoutes(st *kube.State, read kube.State) bool {
	g, r := st.Gateway, read.Gateway
	return g != nil && r != nil && sameOrBothEmpty(st.Services, read.Services) && sameOrBothEmpty(st.EndpointSlices, read.EndpointSlices) &&
		sameOrBothEmpty(st.Secrets, read.Secrets) && sameOrBothEmpty(st.ConfigMaps, read.ConfigMaps) &&
		slices.EqualFunc(g.GatewayClasses, r.GatewayClasses, func(a, c *gwapiv1.GatewayClass) bool {
			return a == c || a.Name == c.Name && a.Generation == c.Generation && reflect.DeepEqual(a.Spec, c.Spec)
		}) &&
		slices.EqualFunc(g.Gateways, r.Gateways, func(a, c *gwapiv1.Gateway) bool {
			return a == c || a.Namespace == c.Namespace && a.Name == c.Name && a.Generation == c.Generation && reflect.DeepEqual(a.Spec, c.Spec)
		}) &&
		slices.Equal(g.GRPCRoutes, r.GRPCRoutes) && slices.Equal(g.TLSRoutes, r.TLSRoutes) &&
		slices.Equal(g.ReferenceGrants, r.ReferenceGrants) && slices.Equal(g.BackendTLSPolicies, r.BackendTLSPolicies) &&
		maps.EqualFunc(g.NamespaceLabels, r.NamespaceLabels, maps.Equal)
}

// httpRouteChanges are the HTTPRoutes that differ between two lists, by
// namespace and name; false when a list names one Route twice. Lists of
// one length whose Routes are of the same names where they differ (an
// edit) are compared by position; lists sorted by namespace and name, as
// the State's are, side by side (a Route added or deleted); others by a
// map of names.
func httpRouteChanges(old, now []*gwapiv1.HTTPRoute) ([]routeChange, bool) {
	var out []routeChange
	if len(old) == len(now) {
		for i, n := range now {
			if o := old[i]; !alikeRoutes(o, n) {
				if o.Namespace != n.Namespace || o.Name != n.Name {
					out = nil
					break
				}
				out = append(out, routeChangeOf(o, n))
			}
		}
		if out != nil {
			return out, true
		}
	}
	if out, ok := sortedRouteChanges(old, now); ok {
		return out, true
	}
	out = nil
	type name struct{ namespace, name string }
	before := make(map[name]*gwapiv1.HTTPRoute, len(old))
	for _, o := range old {
		before[name{o.Namespace, o.Name}] = o
	}
	if len(before) != len(old) {
		return nil, false
	}
	seen := make(map[name]bool, len(now))
	for _, n := range now {
		k := name{n.Namespace, n.Name}
		if seen[k] {
			return nil, false
		}
		seen[k] = true
		if o := before[k]; o == nil || !alikeRoutes(o, n) {
			out = append(out, routeChangeOf(o, n))
		}
		delete(before, k)
	}
	for _, o := range before {
		out = append(out, routeChangeOf(o, nil))
	}
	slices.SortFunc(out, func(a, c routeChange) int { return cmp.Compare(a.key, c.key) })
	return out, true
}

// alikeRoutes says whether two HTTPRoutes are alike in all the build
// reads of them: the same object, or one of the same name, creation,
// generation and spec (the status the leader writes makes a new object
// of each Route it writes; after the first build, of every Route).
func alikeRoutes(a, c *gwapiv1.HTTPRoute) bool {
	return a == c || a.Namespace == c.Namespace && a.Name == c.Name && a.Generation == c.Generation &&
		a.CreationTimestamp.Equal(&c.CreationTimestamp) && reflect.DeepEqual(a.Spec, c.Spec)
}

// routeChangeOf is the change of an HTTPRoute from o to n (either nil).
func routeChangeOf(o, n *gwapiv1.HTTPRoute) routeChange {
	r := cmp.Or(n, o)
	return routeChange{key: kindHTTPRoute + " " + r.Namespace + "/" + r.Name, namespace: r.Namespace, name: r.Name, old: o, now: n}
}

// sortedRouteChanges are the changes between two lists walked side by
// side; false when either is not strictly sorted by namespace and name.
func sortedRouteChanges(old, now []*gwapiv1.HTTPRoute) ([]routeChange, bool) {
	order := func(a, c *gwapiv1.HTTPRoute) int {
		return cmp.Or(strings.Compare(a.Namespace, c.Namespace), strings.Compare(a.Name, c.Name))
	}
	var out []routeChange
	i, j := 0, 0
	for i < len(old) || j < len(now) {
		if i > 0 && i < len(old) && order(old[i-1], old[i]) >= 0 || j > 0 && j < len(now) && order(now[j-1], now[j]) >= 0 {
			return nil, false
		}
		c := -1
		switch {
		case i == len(old):
			c = 1
		case j < len(now):
			c = order(old[i], now[j])
		}
		switch {
		case c < 0:
			out = append(out, routeChangeOf(old[i], nil))
			i++
		case c > 0:
			out = append(out, routeChangeOf(nil, now[j]))
			j++
		default:
			if !alikeRoutes(old[i], now[j]) {
				out = append(out, routeChangeOf(old[i], now[j]))
			}
			i, j = i+1, j+1
		}
	}
	return out, true
}

// editable says whether a Route's hits can be edited in place: each of a
// host by name, in a group of HTTPRoutes alone, not passed through.
func (b *build) editable(hits []hitAt) bool {
	for _, at := range hits {
		g := b.groups[at.group]
		if strings.HasPrefix(at.host, "*") || isTLS(g.protocol) || g.others > 0 {
			return false
		}
		if _, ok := b.passed[at.host]; ok {
			return false
		}
	}
	return true
}

// changeRoutes makes the IR and status of st, which differs from what
// the build read in its HTTPRoutes alone (onlyHTTPRoutes), by editing
// the build: last and status are what it made. False when the change
// cannot be made so: the build is then not to be edited again (its memo
// of what it made stays true).
func (b *build) changeRoutes(st *kube.State, last *ir.IR, status *Status) (*ir.IR, *Status, bool) {
	if len(b.setNames) > 0 {
		return nil, nil, false // own listeners (own.go): built anew
	}
	changes, ok := httpRouteChanges(b.objs.HTTPRoutes, st.Gateway.HTTPRoutes)
	if !ok {
		return nil, nil, false
	}
	for _, c := range changes {
		if !b.editable(b.hitsOf[c.key]) {
			return nil, nil, false
		}
	}
	for _, g := range b.groups {
		if !isTLS(g.protocol) && g.byHost == nil {
			g.index()
		}
	}
	b.st, b.objs, b.prev = st, st.Gateway, b.made
	touched := map[string]bool{}
	for _, c := range changes {
		for _, at := range b.hitsOf[c.key] {
			touched[at.host] = true
		}
		b.detach(c)
	}
	for _, c := range changes {
		if c.now == nil {
			delete(b.made.routes, c.key)
			continue
		}
		r, hr := httpRouteObject(c.now), c.now
		r.object = hr
		b.attachEntries(r, func() []*entry { return b.entries(r, hr) })
		if !b.editable(b.hitsOf[c.key]) {
			return nil, nil, false
		}
		for _, at := range b.hitsOf[c.key] {
			touched[at.host] = true
		}
	}
	return b.remodel(last, sortedKeys(touched)), b.restatus(status, changes), true
}

// detach takes what a Route left in the build away: its hits and the
// hostnames only it served, its status facts and listener counts, its
// problems.
func (b *build) detach(c routeChange) {
	for _, at := range b.hitsOf[c.key] {
		g := b.groups[at.group]
		left := slices.DeleteFunc(g.byHost[at.host], func(h hit) bool {
			return h.route.kind == kindHTTPRoute && h.route.namespace == c.namespace && h.route.name == c.name
		})
		if len(left) == 0 {
			delete(g.byHost, at.host)
		} else {
			g.byHost[at.host] = left
		}
		if b.routeNames[at.host]--; b.routeNames[at.host] == 0 {
			delete(b.routeNames, at.host)
			if !b.listenerNames[at.host] {
				delete(b.names, at.host)
			}
		}
	}
	delete(b.hitsOf, c.key)
	delete(b.routeStatus, c.key)
	for _, listeners := range b.byGateway {
		for _, l := range listeners {
			delete(l.status.attached, c.key)
		}
	}
	b.problems.drop(kindHTTPRoute, c.namespace, c.name)
}

// remodel is last with the hosts of names made again: each spliced in,
// replaced or taken out (the previous value kept where it is the same),
// and the clusters, backends and certificates that start or stop being
// used with them.
func (b *build) remodel(last *ir.IR, names []string) *ir.IR {
	out := *last
	hosts := map[string]*ir.VirtualHost{} // nil: taken out
	var clusters []string                 // used by a host made again, before or after
	certs := map[string]bool{}
	for _, name := range names {
		old, _ := find(last.VirtualHosts, name, hostName)
		var vh *ir.VirtualHost
		if b.names[name] {
			if v, _ := b.vhost("", name); b.shown(v) {
				vh = v
			}
		}
		if old != nil && vh != nil && sameHost(old, vh) {
			continue
		}
		for _, v := range []*ir.VirtualHost{old, vh} {
			if v == nil {
				continue
			}
			n := 1
			if v == old {
				n = -1
			}
			clusters = append(clusters, b.use(v, n)...)
			if v.Certificate != "" {
				certs[v.Certificate] = true
			}
		}
		hosts[name] = vh
	}
	out.VirtualHosts = splice(last.VirtualHosts, hostName, hosts)

	changed := map[string]*ir.Cluster{}
	backends := map[string]*ir.Backend{}
	seen := map[string]bool{}
	for _, name := range clusters {
		if seen[name] {
			continue
		}
		seen[name] = true
		listed, ok := find(last.Clusters, name, clusterName)
		switch want := b.used[name] > 0; {
		case want && !ok:
			c := b.clusters[name]
			changed[name] = c
			b.made.clusters[name] = c
			if b.backendUse[c.Backend]++; b.backendUse[c.Backend] == 1 {
				backends[c.Backend] = b.backends[c.Backend]
			}
		case !want && ok:
			changed[name] = nil
			if b.backendUse[listed.Backend]--; b.backendUse[listed.Backend] == 0 {
				delete(b.backendUse, listed.Backend)
				backends[listed.Backend] = nil
			}
		}
	}
	out.Clusters = splice(last.Clusters, clusterName, changed)
	out.Backends = splice(last.Backends, backendName, backends)
	certificates := map[string]*ir.Certificate{}
	for name := range certs {
		_, listed := find(last.Certificates, name, certificateName)
		if want := b.used[certUse(name)] > 0; want != listed {
			certificates[name] = nil
			if want {
				certificates[name] = b.certs[name]
			}
		}
	}
	out.Certificates = splice(last.Certificates, certificateName, certificates)
	out.Listeners = nil
	b.listeners(&out)
	if slices.EqualFunc(out.Listeners, last.Listeners, func(a, c *ir.Listener) bool { return reflect.DeepEqual(a, c) }) {
		out.Listeners = last.Listeners
	}
	out.Problems = b.problems.sorted()
	return &out
}

// sameHost says whether two virtual hosts are alike: the same routes
// (the very same values) and the same settings.
func sameHost(a, c *ir.VirtualHost) bool {
	x, y := *a, *c
	x.Routes, y.Routes = nil, nil
	return slices.Equal(a.Routes, c.Routes) && reflect.DeepEqual(x, y)
}

func hostName(vh *ir.VirtualHost) string       { return vh.Host }
func clusterName(c *ir.Cluster) string         { return c.Name }
func backendName(be *ir.Backend) string        { return be.Name }
func certificateName(c *ir.Certificate) string { return c.Name }

// find is the value of a name in a list sorted by name.
func find[T any](list []T, name string, nameOf func(T) string) (T, bool) {
	i, ok := slices.BinarySearchFunc(list, name, func(v T, n string) int { return strings.Compare(nameOf(v), n) })
	if !ok {
		var zero T
		return zero, false
	}
	return list[i], true
}

// splice is a new list of list (sorted by name) with the values of
// changes in place of those of their names, each added where it is
// missing and taken out where it is nil. It is list itself when nothing
// changes; list is never modified.
func splice[T comparable](list []T, nameOf func(T) string, changes map[string]T) []T {
	if len(changes) == 0 {
		return list
	}
	var zero T
	out := make([]T, 0, len(list)+len(changes))
	i := 0
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		j, found := slices.BinarySearchFunc(list[i:], name, func(v T, n string) int { return strings.Compare(nameOf(v), n) })
		out = append(out, list[i:i+j]...)
		if i += j; found {
			i++
		}
		if v := changes[name]; v != zero {
			out = append(out, v)
		}
	}
	return append(out, list[i:]...)
}

// restatus is status with the changed Routes' own and every Gateway's
// (their listeners' counts of Routes) made again.
func (b *build) restatus(status *Status, changes []routeChange) *Status {
	out := *status
	out.Gateways = b.gatewayStatuses()
	out.HTTPRoutes = maps.Clone(status.HTTPRoutes)
	out.HTTPRoutesSince, out.HTTPRoutesChanged = status.HTTPRoutes, nil
	for _, c := range changes {
		out.HTTPRoutesChanged = append(out.HTTPRoutesChanged, c.namespace+"/"+c.name)
		delete(out.HTTPRoutes, c.namespace+"/"+c.name)
		if f := b.routeStatus[c.key]; f != nil {
			b.routeStatusInto(&out, f)
		}
	}
	out.BackendTLSPolicies = b.policyStatus()
	return &out
}

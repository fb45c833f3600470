package gatewayapi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// build is one build's working state.
type build struct {
	st   *kube.State
	objs *kube.GatewayObjects
	opts Options
	// byGateway holds our Gateways' listeners, programmed or not; a
	// Gateway of ours with none is present, with none.
	byGateway map[types.NamespacedName][]*listener
	// groups are the programmed listeners by protocol and hostname
	// (groupKey), across Gateways.
	groups map[string]*group
	// names are the hosts to serve: every hostname a Route serves, and
	// every listener's; listenerNames those a listener names, routeNames
	// how many hits each Route's hostname has, hitsOf each Route's hits
	// (by routeObject.key), so that a Route change finds what it touched
	// (incremental.go).
	names         map[string]bool
	listenerNames map[string]bool
	routeNames    map[string]int
	hitsOf        map[string][]hitAt
	// passed are the hosts passed through (tls.go), wide the served
	// hosts that are a wildcard or *, used how many listed hosts use each
	// cluster (by name) and certificate ("cert:" and its name),
	// backendUse how many listed clusters send to each backend: what
	// model made, which a Route change edits (incremental.go).
	passed     map[string]passthrough
	wide       []string
	used       map[string]int
	backendUse map[string]int
	backends   map[string]*ir.Backend
	clusters   map[string]*ir.Cluster
	certs      map[string]*ir.Certificate
	problems   problems
	// prev is what the previous build made, whose values this one hands
	// out again where nothing changed (memo.go); nil: none. made is this
	// build's, for the next.
	prev, made *made
	// reading records what a Route's rules read while they are made
	// (memo.go); nil between Routes.
	reading *routeReads
	// gatewayOf is our Gateways by name; routeStatus each Route's facts
	// (status.go).
	gatewayOf   map[types.NamespacedName]*gwapiv1.Gateway
	routeStatus map[string]*routeFacts
	// passthroughOf is where each TLSRoute passes its hosts' connections
	// (tls.go), by routeObject.key.
	passthroughOf map[string]*ir.Passthrough
	// policies are the BackendTLSPolicies that apply, by the Service port
	// they target; policyList every one (backendtls.go).
	policies   map[policyTarget]*backendPolicy
	policyList []*backendPolicy
	// backendCerts are our Gateways' client certificates for backends,
	// those that name one (backendcert.go).
	backendCerts map[types.NamespacedName]*gatewayBackendCert
	// refusedGateways say why a Gateway is not accepted for its spec
	// (gateways.go: its addresses, its parameters), by Gateway.
	refusedGateways map[types.NamespacedName]gatewayRefusal
	// setNames are the hosts each own listener serves (names is the
	// shared listeners'), by set; ownPorts each set's Envoy port, and
	// ownGateway its Gateway and listener port (own.go).
	setNames   map[string]map[string]bool
	ownPorts   map[string]uint32
	ownGateway map[string]ownSetOf
}

// group is the listeners of one protocol and hostname. Every Gateway's
// listeners share Envoy's one port per protocol, so listeners alike take
// the same requests, and their Routes are served together.
type group struct {
	set      string // listener.set
	protocol ir.Protocol
	hostname string
	// certificate is an HTTPS group's: the first listener's (by Gateway
	// namespace and name), from the one that gave it; so is clientCert,
	// its validation of clients' certificates.
	certificate string
	clientCert  *ir.ClientCert
	from        *listener
	listeners   []*listener
	hits        []hit
	// byHost indexes hits by host, wild lists those of a wildcard host
	// or *: made once all Routes are attached (index), so that a host's
	// routes are found without a walk of every hit; a Route change
	// (incremental.go) edits them in place of hits.
	byHost map[string][]hit
	wild   []hit
	// others counts the hits of Routes other than HTTPRoutes, which a
	// Route change does not edit in place (incremental.go).
	others int
}

// index makes the group's indexes of its hits, which hold them from
// then on (hits is then nil).
func (g *group) index() {
	g.byHost = map[string][]hit{}
	g.wild = nil
	for _, h := range g.hits {
		if strings.HasPrefix(h.host, "*") {
			g.wild = append(g.wild, h)
		} else {
			g.byHost[h.host] = append(g.byHost[h.host], h)
		}
	}
	g.hits = nil
}

// indexed is the group's hits that may serve a host: those of the host,
// then those of a wildcard or none.
func (g *group) indexed(name string) []hit {
	if g.byHost == nil {
		g.index()
	}
	return slices.Concat(g.byHost[name], g.wild)
}

// hit is a Route attached through a group's listener, with one hostname
// it serves there (hostnames.go) and its rules, and the parentRef (its
// outcome's index) that attached it.
type hit struct {
	host    string
	route   *routeObject
	parent  int
	entries []*entry
	// gateway is the Gateway of the listener that attached it.
	gateway *gwapiv1.Gateway
}

// hitAt is where a Route's hit is: its group's key and the host.
type hitAt struct{ group, host string }

// groupKey names a group: its set (listener.set), protocol and hostname.
func groupKey(set string, p ir.Protocol, hostname string) string {
	return set + "|" + string(p) + " " + hostname
}

// entryKey names an entry: one per Route, rule and match (entry.key).
func entryKey(e *entry) string {
	return fmt.Sprintf("%s/%d/%d", e.route.key(), e.rule, e.m)
}

func newBuild(st *kube.State, opts Options) *build {
	objs := st.Gateway
	if objs == nil {
		objs = &kube.GatewayObjects{}
	}
	return &build{st: st, objs: objs, opts: opts, byGateway: map[types.NamespacedName][]*listener{},
		groups: map[string]*group{}, names: map[string]bool{}, listenerNames: map[string]bool{}, routeNames: map[string]int{}, hitsOf: map[string][]hitAt{},
		used: map[string]int{}, backendUse: map[string]int{}, backends: map[string]*ir.Backend{}, clusters: map[string]*ir.Cluster{}, certs: map[string]*ir.Certificate{},
		gatewayOf: map[types.NamespacedName]*gwapiv1.Gateway{}, routeStatus: map[string]*routeFacts{}, passthroughOf: map[string]*ir.Passthrough{}, policies: map[policyTarget]*backendPolicy{}, backendCerts: map[types.NamespacedName]*gatewayBackendCert{}, refusedGateways: map[types.NamespacedName]gatewayRefusal{}, made: newMade(),
		setNames: map[string]map[string]bool{}, ownPorts: map[string]uint32{}, ownGateway: map[string]ownSetOf{}}
}

// join puts a programmed listener in its group. Envoy serves one
// certificate per name: of two HTTPS listeners of one hostname with
// different certificates, the first Gateway's wins and the other is
// reported.
func (b *build) join(l *listener) {
	key := groupKey(l.set, l.protocol, l.hostname)
	g := b.groups[key]
	names := b.namesOf(l.set)
	if g == nil {
		g = &group{set: l.set, protocol: l.protocol, hostname: l.hostname, certificate: l.certificate, clientCert: l.clientCert, from: l, listeners: []*listener{l}}
		b.groups[key] = g
		switch {
		case isTLS(l.protocol):
			// A host is passed through only where a TLSRoute serves it.
		case l.hostname != "":
			names[l.hostname], b.listenerNames[l.hostname] = true, l.set == "" || b.listenerNames[l.hostname]
		case l.protocol == ir.HTTPS:
			// Its certificate answers connections whose SNI names no
			// other listener's host, or none (then 404 where no Route
			// serves the request).
			names[ir.WildcardHost], b.listenerNames[ir.WildcardHost] = true, l.set == "" || b.listenerNames[ir.WildcardHost]
		}
		return
	}
	g.listeners = append(g.listeners, l)
	if g.certificate != l.certificate {
		b.problems.add(kindGateway, l.gateway.Namespace, l.gateway.Name, "CertificateConflict",
			"%s: hostname %q is already served with certificate %s (Gateway %s/%s): %s is not used",
			l.where(), l.hostname, g.certificate, g.from.gateway.Namespace, g.from.gateway.Name, l.certificate)
	}
	if !sameClientCert(g.clientCert, l.clientCert) {
		b.problems.add(kindGateway, l.gateway.Namespace, l.gateway.Name, "ClientCertificateValidationConflict",
			"%s: hostname %q is already served with the client-certificate validation of Gateway %s/%s: this listener's (tls.frontend) is not used",
			l.where(), l.hostname, g.from.gateway.Namespace, g.from.gateway.Name)
	}
}

// routes attaches every HTTPRoute, GRPCRoute and TLSRoute to its
// listeners' groups.
func (b *build) routes() {
	for _, hr := range b.objs.HTTPRoutes {
		r := httpRouteObject(hr)
		r.object = hr
		b.attachEntries(r, func() []*entry { return b.entries(r, hr) })
	}
	for _, gr := range b.objs.GRPCRoutes {
		r := grpcRouteObject(gr)
		r.object = gr
		b.attachEntries(r, func() []*entry { return b.grpcEntries(r, gr) })
	}
	b.tlsRoutes() // tls.go
	for _, key := range slices.Sorted(maps.Keys(b.groups)) {
		b.oneKindPerHost(b.groups[key])
	}
}

// oneKindPerHost applies Gateway API's rule for an HTTPRoute and a
// GRPCRoute attached to one listener with hostnames that intersect:
// exactly one of the two is accepted, the older (then the first by
// namespace/name); the other is detached from the listener and its
// parentRef is not Accepted. (A parentRef that attached it through other
// listeners too is marked all the same.)
func (b *build) oneKindPerHost(g *group) {
	kinds := map[string]bool{}
	for _, h := range g.hits {
		kinds[h.route.kind] = true
	}
	if len(kinds) < 2 {
		return // the common case: nothing to compare
	}
	losers := map[string]*hit{}
	for i := range g.hits {
		for j := range g.hits {
			h, c := &g.hits[i], &g.hits[j]
			if h.route.kind != kindHTTPRoute || c.route.kind != kindGRPCRoute || !intersect(h.host, c.host) {
				continue
			}
			loser, winner := c, h
			if cmp.Or(olderFirst(c.route, h.route), cmp.Compare(c.route.namespace+"/"+c.route.name, h.route.namespace+"/"+h.route.name)) < 0 {
				loser, winner = h, c
			}
			if losers[loser.route.key()] == nil {
				losers[loser.route.key()] = loser
				b.problem(loser.route, "RouteConflict", "host %s of listener hostname %q is also %s %s/%s's, which is older (or first by name): not attached",
					loser.host, g.hostname, winner.route.kind, winner.route.namespace, winner.route.name)
			}
		}
	}
	if len(losers) == 0 {
		return
	}
	g.hits = slices.DeleteFunc(g.hits, func(h hit) bool {
		if losers[h.route.key()] == nil {
			return false
		}
		f := b.routeFacts(h.route)
		f.parents[h.parent].accepted = false
		f.parents[h.parent].reason = "RouteConflict"
		f.parents[h.parent].message = "an older Route of the other kind serves an intersecting hostname on the listener"
		for _, l := range g.listeners {
			delete(l.status.attached, h.route.key())
		}
		return true
	})
}

// intersect says whether two hostnames a Route serves share a host.
func intersect(a, c string) bool {
	return a == c || a == ir.WildcardHost || c == ir.WildcardHost || covers(a, c) || covers(c, a)
}

// attachEntries attaches a Route, and its entries (made by entries) to
// the hosts it serves through each listener.
func (b *build) attachEntries(r *routeObject, entries func() []*entry) {
	atts := b.attach(r)
	if b.routeStatus[r.key()] == nil {
		return // no parentRef of ours
	}
	// A Route of ours that attached nowhere is still read, for its
	// references' status and problems.
	list := b.routeEntries(r, entries)
	for _, a := range atts {
		key := groupKey(a.listener.set, a.listener.protocol, a.listener.hostname)
		for _, name := range a.hosts {
			b.addHit(key, hit{host: name, route: r, parent: a.parent, entries: list, gateway: a.listener.gateway})
		}
	}
}

// addHit attaches a Route to a host through a group: listed in the group,
// and, once the group is indexed (a Route change, incremental.go), in
// its index.
func (b *build) addHit(key string, h hit) {
	g := b.groups[key]
	b.namesOf(g.set)[h.host] = true
	b.routeNames[h.host]++
	rk := h.route.key()
	b.hitsOf[rk] = append(b.hitsOf[rk], hitAt{group: key, host: h.host})
	if h.route.kind != kindHTTPRoute {
		g.others++
	}
	switch {
	case g.byHost == nil:
		g.hits = append(g.hits, h)
	case strings.HasPrefix(h.host, "*"):
		g.wild = append(g.wild, h)
	default:
		g.byHost[h.host] = append(g.byHost[h.host], h)
	}
}

// listenerFor is the group that takes a host's requests on a protocol's
// port: as Gateway API chooses a listener, the one whose hostname is the
// host, else the longest wildcard covering it, else the one without a
// hostname; nil when none does.
func (b *build) listenerFor(set, name string, p ir.Protocol) *group {
	if g := b.groups[groupKey(set, p, name)]; g != nil {
		return g
	}
	var best *group
	for _, g := range b.groups {
		if g.set != set || g.protocol != p || g.hostname == "" || !covers(g.hostname, name) {
			continue
		}
		if best == nil || len(g.hostname) > len(best.hostname) {
			best = g
		}
	}
	if best == nil {
		best = b.groups[groupKey(set, p, "")]
	}
	return best
}

// serving is what a host serves on a protocol's port: the rules of every
// Route attached to the listener that takes the host whose hostname
// there matches it, the Routes of the more specific hostname first (an
// exact name, then the longest wildcard, then none), then Gateway API's
// match precedence. A Route's rule is listed once, at its most specific
// hostname.
func (b *build) serving(set, name string, p ir.Protocol) (*group, []*entry) {
	g := b.listenerFor(set, name, p)
	if g == nil {
		return nil, nil
	}
	type ranked struct {
		e    *entry
		rank int
	}
	at := map[string]int{} // entry key -> index in list
	var list []ranked
	for _, h := range g.indexed(name) {
		r, ok := hostRank(h.host, name)
		if !ok {
			continue
		}
		for _, e := range h.entries {
			if k, seen := at[e.key]; !seen {
				at[e.key] = len(list)
				list = append(list, ranked{e, r})
			} else if r > list[k].rank {
				list[k].rank = r
			}
		}
	}
	for _, h := range b.namedElsewhere(name, p, g) {
		for _, e := range h.entries {
			if _, seen := at[e.key]; !seen {
				at[e.key] = len(list)
				list = append(list, ranked{e, 1 << 16})
			}
		}
	}
	slices.SortStableFunc(list, func(a, c ranked) int {
		return cmp.Or(cmp.Compare(c.rank, a.rank), precedence(a.e, c.e))
	})
	out := make([]*entry, len(list))
	for i, r := range list {
		out[i] = r.e
	}
	return g, out
}

// namedElsewhere are the hits that name a host outright through the
// listeners of Gateways with none in g, the group that takes the host.
// Gateway API chooses a listener within one Gateway; here every Gateway
// shares Envoy's ports and addresses, so the listener is chosen across
// them, and another Gateway's wider listener (a wildcard covering the
// host) would take a host a Route names exactly through a Gateway of its
// own. Each such Gateway chooses its own listener for the host, and the
// Routes that name the host there are served beside g's. Routes without
// hostnames, or with a wildcard, are not: the more specific listener
// keeps the requests they would otherwise take (listener isolation).
func (b *build) namedElsewhere(name string, p ir.Protocol, g *group) []*hit {
	if strings.HasPrefix(name, "*") {
		return nil
	}
	var out []*hit
	for _, nn := range slices.SortedFunc(maps.Keys(b.byGateway), func(a, c types.NamespacedName) int {
		return cmp.Compare(a.String(), c.String())
	}) {
		var own *listener
		best := -1
		for _, l := range b.byGateway[nn] {
			if !l.programmed || l.protocol != p || l.set != g.set {
				continue
			}
			if r := listenerRank(l.hostname, name); r > best {
				own, best = l, r
			}
		}
		if own == nil || own.hostname == g.hostname {
			continue // no listener for the host, or one of g's
		}
		gg := b.groups[groupKey(g.set, p, own.hostname)]
		if gg == nil {
			continue
		}
		if gg.byHost == nil {
			gg.index()
		}
		for i := range gg.byHost[name] {
			if h := &gg.byHost[name][i]; h.gateway == own.gateway {
				out = append(out, h)
			}
		}
	}
	return out
}

// listenerRank is how a listener hostname takes a host, as Gateway API
// chooses among a Gateway's listeners: the host itself first, then the
// longest wildcard covering it, then none; -1 when it does not.
func listenerRank(hostname, name string) int {
	switch {
	case hostname == name:
		return 1 << 16
	case hostname == "":
		return 0
	case covers(hostname, name):
		return len(hostname)
	}
	return -1
}

// hostRank says whether a Route's hostname matches a host, and how
// specifically: an exact name ranks above every wildcard, a longer
// wildcard above a shorter one, and none (ir.WildcardHost) lowest.
func hostRank(routeHost, name string) (int, bool) {
	switch {
	case routeHost == name && !strings.HasPrefix(name, "*"):
		return 1 << 16, true
	case routeHost == name || covers(routeHost, name):
		return len(routeHost), true
	case routeHost == ir.WildcardHost:
		return 0, true
	}
	return 0, false
}

// model is the IR of the build: a virtual host per name, each with the
// routes each protocol's listeners serve it, and the listeners,
// clusters, backends and certificates they need.
func (b *build) model() *ir.IR {
	out := &ir.IR{Listeners: []*ir.Listener{}, VirtualHosts: []*ir.VirtualHost{}, Clusters: []*ir.Cluster{},
		Backends: []*ir.Backend{}, Certificates: []*ir.Certificate{}}
	// Each own listener's hosts (own.go), then the shared listeners',
	// whose passthroughs and wide hosts stay the build's for a Route
	// change (incremental.go).
	for _, set := range slices.Sorted(maps.Keys(b.setNames)) {
		if o := b.ownListener(set, b.hostsOf(set)); o != nil {
			out.OwnListeners = append(out.OwnListeners, o)
		}
	}
	slices.SortFunc(out.OwnListeners, func(a, c *ir.OwnListener) int { return cmp.Compare(a.Listener.Port, c.Listener.Port) })
	out.VirtualHosts = append(out.VirtualHosts, b.hostsOf("")...)
	// Clusters in name order, a backend's adjacent (its name is their
	// prefix); backends in name order, those some listed cluster sends to.
	for _, name := range slices.Sorted(maps.Keys(b.clusters)) {
		if b.used[name] > 0 {
			c := b.clusters[name]
			out.Clusters = append(out.Clusters, c)
			b.backendUse[c.Backend]++
			b.made.clusters[name] = c
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.backendUse)) {
		out.Backends = append(out.Backends, b.backends[id])
	}
	for _, id := range slices.Sorted(maps.Keys(b.certs)) {
		if b.used[certUse(id)] > 0 {
			out.Certificates = append(out.Certificates, b.certs[id])
		}
	}
	b.listeners(out)
	out.Problems = b.problems.sorted()
	return out
}

// hostsOf is the virtual hosts a set serves (listener.set), each counted
// as used; it leaves b.passed and b.wide the set's.
func (b *build) hostsOf(set string) []*ir.VirtualHost {
	b.passed, b.wide = b.passthroughs(set), nil // tls.go
	var vhosts, out []*ir.VirtualHost
	for _, name := range slices.Sorted(maps.Keys(b.namesOf(set))) {
		vh, served := b.vhost(set, name)
		if served && (name == ir.WildcardHost || strings.HasPrefix(name, "*")) {
			b.wide = append(b.wide, name)
		}
		vhosts = append(vhosts, vh)
	}
	for _, vh := range vhosts {
		if b.shown(vh) {
			b.use(vh, 1)
			out = append(out, vh)
		}
	}
	return out
}

// vhost is the virtual host of a name in a set, and whether it is
// served: it has routes, is passed through, or is the certificate of
// every other name.
func (b *build) vhost(set, name string) (*ir.VirtualHost, bool) {
	// A Gateway API wildcard covers any number of labels.
	vh := &ir.VirtualHost{Host: name, AnyDepth: strings.HasPrefix(name, "*.")}
	_, plain := b.serving(set, name, ir.HTTP)
	tls, secure := b.serving(set, name, ir.HTTPS)
	switch {
	case tls != nil && len(secure) > 0 && name != ir.WildcardHost:
		vh.Certificate, vh.ClientCert = tls.certificate, tls.clientCert
		// A listener takes only its own hosts: another's on its
		// connections is misdirected (421). Those of the listener
		// without a hostname are the connections no other
		// listener's SNI takes, so its hosts are served there.
		vh.MisdirectOthers = true
		vh.DefaultChain = tls.hostname == ""
	case tls != nil && name == ir.WildcardHost && tls.hostname == "":
		// The HTTPS listener without a hostname: its certificate is
		// the one of every other name (Envoy's default chain), with
		// or without Routes.
		vh.Certificate, vh.ClientCert = tls.certificate, tls.clientCert
	}
	vh.Routes = sides(plain, secure, vh.Certificate != "")
	served := len(vh.Routes) > 0 || name == ir.WildcardHost && vh.Certificate != ""
	if p, ok := b.passed[name]; ok && b.passThrough(set, vh, p, plain) {
		served = true
	}
	return vh, served
}

// shown says whether a host is listed: a listener's hostname without
// routes is a host only where a wider host with routes would otherwise
// take its requests: it answers 404, as its listener does.
func (b *build) shown(vh *ir.VirtualHost) bool {
	return len(vh.Routes) > 0 || vh.Passthrough != nil || slices.ContainsFunc(b.wide, func(w string) bool { return w == ir.WildcardHost || covers(w, vh.Host) })
}

// certUse is a certificate's key in build.used.
func certUse(name string) string { return "cert:" + name }

// use counts (by n: 1 or -1) what a listed host uses: its certificate,
// the cluster it passes its connections through to, the clusters its
// routes forward and mirror to. It returns the clusters.
func (b *build) use(vh *ir.VirtualHost, n int) []string {
	var clusters []string
	if vh.Certificate != "" {
		b.used[certUse(vh.Certificate)] += n
	}
	if vh.Passthrough != nil {
		clusters = append(clusters, vh.Passthrough.Clusters()...)
	}
	for _, r := range vh.Routes {
		if fw := r.Action.Forward; fw != nil {
			for _, c := range fw.Clusters {
				clusters = append(clusters, c.Cluster)
			}
		}
		if r.Policy != nil {
			for _, m := range r.Policy.Mirrors {
				clusters = append(clusters, m.Cluster)
			}
		}
	}
	for _, c := range clusters {
		b.used[c] += n
	}
	return clusters
}

// sides is one host's routes for both protocols' listeners: the same
// routes when both serve the same rules (or the host has no certificate,
// so that HTTPS never serves it); else each side's, marked as served
// there only (ir.Route.Only).
func sides(plain, secure []*entry, tls bool) []*ir.Route {
	same := !tls || slices.EqualFunc(plain, secure, func(a, c *entry) bool { return a == c })
	out := []*ir.Route{} // a listener's host without Routes answers 404
	for _, e := range plain {
		r := e.irRoute
		if !same {
			r = only(r, ir.HTTP)
		}
		out = append(out, r)
	}
	if same {
		return out
	}
	for _, e := range secure {
		out = append(out, only(e.irRoute, ir.HTTPS))
	}
	return out
}

// only is a copy of r served on one protocol's listeners alone.
func only(r *ir.Route, p ir.Protocol) *ir.Route {
	c := *r
	c.Only = p
	return &c
}

// listeners are the IR's: Envoy's HTTP and HTTPS ports, each while some
// Gateway listener of its protocol is programmed (and, for HTTPS, some
// host has a certificate). The IR serves every virtual host on every
// HTTP listener; Route.Only keeps each route to its side.
func (b *build) listeners(out *ir.IR) {
	address := cmp.Or(b.opts.ListenAddress, "0.0.0.0")
	var http, https bool
	for _, g := range b.groups {
		if g.set != "" {
			continue // its own listener's (own.go)
		}
		http = http || g.protocol == ir.HTTP
		https = https || g.protocol == ir.HTTPS || isTLS(g.protocol)
	}
	passthrough := slices.ContainsFunc(out.VirtualHosts, func(vh *ir.VirtualHost) bool { return vh.Passthrough != nil })
	if http {
		out.Listeners = append(out.Listeners, &ir.Listener{Name: cmp.Or(b.opts.HTTPListener, HTTPListenerName), Address: address, Port: b.opts.HTTPPort, Protocol: ir.HTTP})
	}
	if https && (len(out.Certificates) > 0 || passthrough) {
		out.Listeners = append(out.Listeners, &ir.Listener{Name: cmp.Or(b.opts.HTTPSListener, HTTPSListenerName), Address: address, Port: b.opts.HTTPSPort, Protocol: ir.HTTPS})
	}
	slices.SortFunc(out.Listeners, func(a, c *ir.Listener) int { return cmp.Compare(a.Port, c.Port) })
}

// sortedKeys are a set's members in order.
func sortedKeys(set map[string]bool) []string { return slices.Sorted(maps.Keys(set)) }

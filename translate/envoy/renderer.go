package envoy

import (
	"bytes"
	"fmt"
	"slices"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/internal/listdiff"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Renderer renders IR after IR. It keeps the messages rendered by the
// previous call and hands them out again when their inputs are the very
// same IR values (the IR's identity contract), so a reused message is
// identical to a fresh rendering. Messages are shared with published
// snapshots, so nobody may modify them. It is not safe for concurrent use.
//
// The maps are updated in place and pruned of what the IR no longer has
// once that is half of them: a render costs a lookup per resource, not a
// new map per resource type.
type Renderer struct {
	listeners map[ir.Listener]*listenerEntry
	clusters  map[string]*clusterEntry
	loads     map[string]*loadEntry
	vhosts    map[vhostKey]*vhostEntry
	chains    map[string]*chainEntry
	secrets   map[string]*secretEntry
	// gzipSets are the hosts' compression settings, one string per
	// distinct set (compression.go): equal sets share their bytes, so
	// that comparing them at every render is a pointer's compare.
	gzipSets map[gzipSet]gzipSet

	// The previous render's clusters and backends and the
	// resources made of them: when they are the same values in the same
	// order, so are those lists, and an Ingress change at scale need not
	// look up every cluster and backend to find that out.
	lastClusterValues []*ir.Cluster
	lastBackends      []*ir.Backend
	lastClusters      []Cluster
	lastEndpoints     []LoadAssignment
	// lastClusterBackend is, for each of lastClusterValues, the backend
	// its message was rendered with; lastLoadOf, for each of lastBackends,
	// the position of its load assignment in lastEndpoints, or -1.
	lastClusterBackend []*ir.Backend
	lastLoadOf         []int
	lastHTTP           httpRoutes
	parts              *clusterParts
	// onDemandRoutes is the route configurations' on_demand filter
	// configuration (ondemand.go).
	onDemandRoutes map[string]*anypb.Any
	// The route scopes (scopes.go): their last route configurations, the
	// settings those share, the scopes sent over SRDS (the same list each
	// render, so xds finds it unchanged at a glance) and the table a
	// host's scope is read from.
	scopes        []scopeEntry
	scopeSettings *routev3.RouteConfiguration
	scopeLists    map[string][]*routev3.ScopedRouteConfiguration
	scopeTable    *scopeTable

	next generation

	opts Options
	// routeScopes is the number of route scopes the plain-HTTP listener's
	// routes are in: Options.RouteScopes, or as sized (scopes_auto.go).
	routeScopes int
	authz       authzClusters
	otlp        otlpClusters // tracing.go
	// upstream is the IR's Upstream the clusters were rendered with
	// (upstream_pool.go): a change renders every cluster again.
	upstream ir.Upstream
	// own are the renderers of the IR's own listeners (ir.OwnListener),
	// by listener name (own.go); httpsRoutePrefix names the route
	// configurations of HTTPS hosts, HTTPSRoutePrefix but in an own
	// listener's renderer.
	own              map[string]*Renderer
	httpsRoutePrefix string
	// delta is what the last render made for delta Envoys alone
	// (vhds_delta.go).
	delta deltaDiscovered
}

// Options are the renderer's settings that are not in the IR: where Envoy
// finds what runs beside it.
type Options struct {
	// AuthzAddress is the ip:port of the authorisation service beside
	// each Envoy (authz.go); DefaultAuthzAddress when empty.
	AuthzAddress string
	// VirtualHostDiscovery sends the plain-HTTP listener's virtual hosts
	// over VHDS, each a resource of its own, for Envoys on delta xDS
	// (vhds.go).
	VirtualHostDiscovery bool
	// OnDemandClusters has Envoy fetch a route's cluster when a request
	// first needs it (ondemand.go), for Envoys on delta xDS.
	OnDemandClusters bool
	// RouteScopes, above 0, splits the plain-HTTP listener's route
	// configuration into that many, a host's virtual host in the one its
	// name hashes to (scopes.go), so that Envoy rebuilds a part of its
	// route table per change. Not with VirtualHostDiscovery.
	RouteScopes int
	// AutoRouteScopes, with RouteScopes 0 and without
	// VirtualHostDiscovery, sizes the route scopes to the number of
	// virtual hosts at each render (scopes_auto.go).
	AutoRouteScopes bool
	// DeltaVirtualHostDiscovery, while the plain-HTTP listener has no
	// route scopes, renders its route configuration both whole, for SotW
	// Envoys, and with its virtual hosts over VHDS, for delta Envoys
	// (vhds_delta.go).
	DeltaVirtualHostDiscovery bool
}

// httpRoutes is the last plain-HTTP route configuration's virtual hosts,
// IR and rendering side by side.
type httpRoutes struct {
	ir   []*ir.VirtualHost
	msgs []*renderedHost
}

// generation holds what a render used of the few, small kinds that are
// simply rebuilt each time.
type generation struct {
	chains  map[string]*chainEntry
	secrets map[string]*secretEntry
}

type listenerEntry struct {
	uses   filterSet
	gzip   gzipSet
	scopes int
	msg    *listenerv3.Listener
}

type clusterEntry struct {
	cluster *ir.Cluster
	msg     Cluster
	// What a cluster reads of its backend, but for its name (the
	// cluster's Backend): one entry per cluster, so only that.
	port         int32
	externalName string
}

type loadEntry struct {
	endpoints []ir.Endpoint
	msg       LoadAssignment
}

type vhostKey struct {
	host     string
	listener listenerSide
}

type vhostEntry struct {
	routes []*ir.Route
	// cert is the host's certificate: whether it has one decides some
	// redirects to HTTPS.
	cert     string
	aliases  []string
	client   *ir.ClientCert // clientcert.go
	rendered *renderedHost
}

// renderedHost is a virtual host's message and the optional filters its
// routes use.
type renderedHost struct {
	msg  *routev3.VirtualHost
	uses filterSet
	// gzip are the compression settings its routes ask
	// (compression.go).
	gzip gzipSet
}

type chainEntry struct {
	// listener is the listener the chain was rendered for: its connection
	// manager and TLS context say what the listener does.
	listener ir.Listener
	cert     string
	ciphers  string // the host's own (downstream.go)
	uses     filterSet
	gzip     gzipSet
	aliases  []string
	client   *ir.ClientCert // clientcert.go
	msg      *listenerv3.FilterChain
}

type secretEntry struct {
	cert      *ir.Certificate
	ticketKey []byte // a session ticket key's (downstream.go)
	msg       *tlsv3.Secret
}

// NewRenderer returns a Renderer with nothing remembered yet and the
// default Options.
func NewRenderer() *Renderer {
	return NewRendererWith(Options{})
}

// NewRendererWith returns a Renderer with nothing remembered yet.
func NewRendererWith(o Options) *Renderer {
	return &Renderer{
		opts:        o,
		routeScopes: o.RouteScopes,
		listeners:   map[ir.Listener]*listenerEntry{},
		clusters:    map[string]*clusterEntry{},
		loads:       map[string]*loadEntry{},
		vhosts:      map[vhostKey]*vhostEntry{},
		parts:       newClusterParts(),

		httpsRoutePrefix: HTTPSRoutePrefix,
	}
}

// Render renders an IR.
func (c *Renderer) Render(m *ir.IR) (*Resources, error) {
	c.next = generation{chains: map[string]*chainEntry{}, secrets: map[string]*secretEntry{}}
	res := &Resources{}
	if c.opts.AutoRouteScopes && c.opts.RouteScopes == 0 && !c.opts.VirtualHostDiscovery {
		c.resizeScopes(len(m.VirtualHosts)) // scopes_auto.go
	}
	var used filterSet // by any listener
	nextDelta := deltaDiscovered{vhosts: map[*routev3.VirtualHost]*routev3.VirtualHost{}, stubs: map[string]*routev3.RouteConfiguration{}}
	for _, l := range m.Listeners {
		switch l.Protocol {
		case ir.HTTP:
			rc, uses, gz, err := c.httpRouteConfiguration(l, m.VirtualHosts)
			if err != nil {
				return nil, err
			}
			uses |= c.onDemandUse() // ondemand.go
			if c.opts.VirtualHostDiscovery {
				// vhds.go: the virtual hosts go as resources of their own.
				vhosts := discoverVirtualHosts(rc)
				if len(vhosts) == 0 {
					vhosts = []*routev3.VirtualHost{c.noHostYet(rc.GetName(), &nextDelta)} // vhds_delta.go
				}
				res.VirtualHosts = append(res.VirtualHosts, vhosts...)
			}
			used |= uses
			lis, err := c.listener(l, uses, gz)
			if err != nil {
				return nil, err
			}
			res.Listeners = append(res.Listeners, lis)
			if c.routeScopes > 0 {
				// scopes.go: the route configuration in parts.
				res.Routes = append(res.Routes, c.scopedRouteConfigurations(rc, m.VirtualHosts)...)
				if res.ScopedRoutes != nil {
					// Envoy hands every scope over SRDS to every listener
					// that asks: scopes are for one listener.
					return nil, fmt.Errorf("listener %s: route scopes serve one plain-HTTP listener", l.Name)
				}
				res.ScopedRoutes = c.scopesOf(l.Name)
			} else {
				if c.deltaDiscovery() {
					stub, vhosts := c.discoverForDelta(rc, &nextDelta) // vhds_delta.go
					res.DeltaRoutes = append(res.DeltaRoutes, stub)
					res.VirtualHosts = append(res.VirtualHosts, vhosts...)
				}
				res.Routes = append(res.Routes, rc)
			}
		case ir.HTTPS:
			if err := c.addHTTPS(res, l, m); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("listener %s: unknown protocol %q", l.Name, l.Protocol)
		}
	}
	ownUses, ownChains, err := c.renderOwn(res, m) // own.go
	if err != nil {
		return nil, err
	}
	used |= ownUses
	if len(c.next.chains) > 0 || ownChains {
		for _, cert := range m.Certificates {
			res.Secrets = append(res.Secrets, c.secret(cert))
		}
		res.Secrets = append(res.Secrets, c.ticketKeySecrets(m)...)
	}
	if err := c.useUpstream(m.Upstream); err != nil {
		return nil, err
	}
	if err := c.clustersAndLoads(res, m); err != nil {
		return nil, err
	}
	for _, ch := range c.next.chains {
		used |= ch.uses
	}
	clusters, err := c.withAuthzCluster(res.Clusters, used, anyRequestMetrics(m)) // requestmetrics.go
	if err != nil {
		return nil, err
	}
	if clusters, err = c.withOTLPCluster(clusters, m, used); err != nil { // tracing.go
		return nil, err
	}
	res.Clusters = clusters
	res.OnDemand = c.onDemand(m) // ondemand.go
	c.delta = nextDelta
	c.chains, c.secrets = c.next.chains, c.next.secrets
	c.next = generation{}
	c.prune(m)
	return res, nil
}

// clustersAndLoads renders the clusters and the backends' load
// assignments (ExternalName backends have none: Envoy resolves them).
func (c *Renderer) clustersAndLoads(res *Resources, m *ir.IR) error {
	if c.lastBackends != nil && slices.Equal(m.Backends, c.lastBackends) && slices.Equal(m.Clusters, c.lastClusterValues) {
		res.Clusters, res.Endpoints = c.lastClusters, c.lastEndpoints
		return nil
	}
	res.Clusters = make([]Cluster, 0, len(m.Clusters))
	res.Endpoints = make([]LoadAssignment, 0, len(m.Backends))
	// The previous render's messages of the clusters and backends that are
	// the same values, found in place by identity: a cluster added among
	// 100,000 (a path switched to a new Service at 10,000 Ingresses) then
	// costs a comparison per cluster, not a lookup each.
	prevCluster, prevBackend := c.pairWithLast(m)
	clusterBackend := make([]*ir.Backend, 0, len(m.Clusters))
	// A backend's clusters are adjacent, and in backend order (ir.Validate
	// holds the IR to it): one walk pairs each cluster with its backend.
	b := 0
	// Backends whose only clusters send to one address (service-upstream)
	// have no load assignment: no cluster would ask for it.
	eds := make([]bool, len(m.Backends))
	for i, cl := range m.Clusters {
		for b < len(m.Backends) && m.Backends[b].Name != cl.Backend {
			b++
		}
		if b == len(m.Backends) {
			return fmt.Errorf("cluster %s: backend %q is not in the IR, or not in order", cl.Name, cl.Backend)
		}
		var msg Cluster
		if k := prevCluster[i]; k >= 0 && c.lastClusterBackend[k] == m.Backends[b] {
			msg = c.lastClusters[k]
		} else {
			var err error
			if msg, err = c.cluster(cl, m.Backends[b]); err != nil {
				return err
			}
		}
		res.Clusters = append(res.Clusters, msg)
		clusterBackend = append(clusterBackend, m.Backends[b])
		eds[b] = eds[b] || cl.UsesEndpoints()
	}
	// A backend that had its load assignment last time has the same one.
	loadOf := make([]int, len(m.Backends))
	render := slices.Clone(eds)
	for i := range m.Backends {
		loadOf[i] = -1
		if k := prevBackend[i]; k >= 0 && c.lastLoadOf[k] >= 0 {
			render[i] = false
		}
	}
	c.prerenderLoads(m.Backends, render) // parallel.go
	for i, be := range m.Backends {
		if be.ExternalName == "" && eds[i] {
			loadOf[i] = len(res.Endpoints)
			if !render[i] {
				res.Endpoints = append(res.Endpoints, c.lastEndpoints[c.lastLoadOf[prevBackend[i]]])
			} else {
				res.Endpoints = append(res.Endpoints, c.LoadAssignment(be))
			}
		}
	}
	c.lastClusterBackend, c.lastLoadOf = clusterBackend, loadOf
	// IR lists are never modified: keeping them is keeping a copy.
	c.lastBackends, c.lastClusterValues = m.Backends, m.Clusters
	c.lastClusters, c.lastEndpoints = res.Clusters, res.Endpoints
	return nil
}

// pairWithLast gives, for each of m's clusters and backends, the position
// of the same value in the previous render's lists, or -1.
func (c *Renderer) pairWithLast(m *ir.IR) (clusters, backends []int) {
	clusters, backends = make([]int, len(m.Clusters)), make([]int, len(m.Backends))
	for i := range clusters {
		clusters[i] = -1
	}
	for i := range backends {
		backends[i] = -1
	}
	if c.lastClusterBackend == nil {
		return clusters, backends
	}
	listdiff.Walk(c.lastClusterValues, m.Clusters, func(i, k int) { clusters[i] = k }, func(int) {}, func(int) {})
	listdiff.Walk(c.lastBackends, m.Backends, func(i, k int) { backends[i] = k }, func(int) {}, func(int) {})
	return clusters, backends
}

// httpRouteConfiguration renders every virtual host for a plain-HTTP
// listener. That configuration holds every host and a change alters one or
// two: the previous one gives the renderings of the unchanged virtual hosts,
// found in place by identity, without a lookup each.
func (c *Renderer) httpRouteConfiguration(l *ir.Listener, vhosts []*ir.VirtualHost) (*routev3.RouteConfiguration, filterSet, gzipSet, error) {
	rc := &routev3.RouteConfiguration{Name: l.Name, VirtualHosts: make([]*routev3.VirtualHost, len(vhosts)),
		TypedPerFilterConfig:     c.onDemandRouteConfig(), // ondemand.go
		IgnorePortInHostMatching: l.KeepHostPort,
		// A route's header changes after these: nginx's snippets
		// and annotations act after the template's forwarded headers
		// and HSTS (translate/ingress/snippet).
		MostSpecificHeaderMutationsWins: true}
	rc.RequestHeadersToAdd, rc.RequestHeadersToRemove = forwardedHeaders(l)  // downstream.go
	rc.ResponseHeadersToAdd, rc.ResponseHeadersToRemove = responseHeaders(l) // downstream.go
	rendered := make([]*renderedHost, len(vhosts))
	prev := c.lastHTTP
	var err error
	listdiff.Walk(prev.ir, vhosts,
		func(i, k int) { rendered[i] = prev.msgs[k] },
		func(i int) {
			if err == nil {
				rendered[i], err = c.virtualHost(vhosts[i], c.httpSide(l))
			}
		},
		func(int) {})
	if err != nil {
		return nil, 0, "", err
	}
	var uses filterSet
	var sets []gzipSet // distinct, few
	for i, r := range rendered {
		rc.VirtualHosts[i] = r.msg
		uses |= r.uses
		if r.gzip != "" && !slices.Contains(sets, r.gzip) {
			sets = append(sets, r.gzip)
		}
	}
	var gz gzipSet
	for _, s := range sets {
		gz = gz.union(s)
	}
	c.lastHTTP = httpRoutes{ir: vhosts, msgs: rendered}
	addRetriedAfterSent(rc, uses) // nonidempotent.go
	return rc, uses, gz, nil
}

func (c *Renderer) listener(l *ir.Listener, uses filterSet, gz gzipSet) (*listenerv3.Listener, error) {
	e := c.listeners[*l]
	if e == nil || e.uses != uses || e.gzip != gz || e.scopes != c.routeScopes {
		msg, err := httpListener(l, uses, gz, c.routeScopes)
		if err != nil {
			return nil, err
		}
		e = &listenerEntry{uses: uses, gzip: gz, scopes: c.routeScopes, msg: msg}
		c.listeners[*l] = e
	}
	return e.msg, nil
}

// prune drops what the IR no longer has, once that is half the entries.
func (c *Renderer) prune(m *ir.IR) {
	if len(c.clusters) > 2*len(m.Clusters)+64 {
		live := make(map[string]bool, len(m.Clusters))
		for _, cl := range m.Clusters {
			live[cl.Name] = true
		}
		for name := range c.clusters {
			if !live[name] {
				delete(c.clusters, name)
			}
		}
	}
	if len(c.loads) > 2*len(m.Backends)+64 {
		live := make(map[string]bool, len(m.Backends))
		for _, be := range m.Backends {
			live[be.Name] = true
		}
		for name := range c.loads {
			if !live[name] {
				delete(c.loads, name)
			}
		}
	}
	if len(c.vhosts) > 4*len(m.VirtualHosts)+64 {
		live := make(map[string]bool, len(m.VirtualHosts))
		for _, vh := range m.VirtualHosts {
			live[vh.Host] = true
		}
		for key := range c.vhosts {
			if !live[key.host] {
				delete(c.vhosts, key)
			}
		}
	}
	if len(c.listeners) > 2*len(m.Listeners)+8 {
		clear(c.listeners)
	}
}

func (c *Renderer) cluster(cl *ir.Cluster, be *ir.Backend) (Cluster, error) {
	e := c.clusters[cl.Name]
	if e == nil || e.port != be.Port || e.externalName != be.ExternalName || (e.cluster != cl && !sameCluster(e.cluster, cl)) {
		msg, err := renderCluster(cl, be, c.parts)
		if err != nil {
			return nil, err
		}
		e = &clusterEntry{cluster: cl, msg: msg, port: be.Port, externalName: be.ExternalName}
		c.clusters[cl.Name] = e
	}
	return e.msg, nil
}

// sameCluster compares two clusters' values. Names include a hash of the
// policy, so equal names with equal backends mean equal policies but for a
// hash collision, which the comparison of policies rules out.
func sameCluster(a, b *ir.Cluster) bool {
	if a.Name != b.Name || a.Backend != b.Backend || (a.Policy == nil) != (b.Policy == nil) {
		return false
	}
	return a.Policy == nil || ir.ClusterName("", a.Policy) == ir.ClusterName("", b.Policy)
}

// LoadAssignment renders a backend's load assignment, the same message as
// last time for the same endpoints (by identity), and remembers it. The
// endpoint fast path calls it outside a render; the next render reuses
// what it made.
func (c *Renderer) LoadAssignment(be *ir.Backend) LoadAssignment {
	e := c.loads[be.Name]
	if e == nil || !ir.SameEndpoints(e.endpoints, be.Endpoints) {
		e = &loadEntry{endpoints: be.Endpoints, msg: loadAssignment(be)}
		c.loads[be.Name] = e
	}
	return e.msg
}

func (c *Renderer) virtualHost(vh *ir.VirtualHost, l listenerSide) (*renderedHost, error) {
	key := vhostKey{host: vh.Host, listener: l}
	e := c.vhosts[key]
	if e == nil || e.cert != vh.Certificate || !slices.Equal(e.routes, vh.Routes) || !slices.Equal(e.aliases, vh.Aliases) || e.client != vh.ClientCert {
		msg, uses, err := renderVirtualHost(vh, l)
		if err != nil {
			return nil, err
		}
		e = &vhostEntry{routes: slices.Clone(vh.Routes), cert: vh.Certificate, aliases: vh.Aliases, client: vh.ClientCert,
			rendered: &renderedHost{msg: msg, uses: uses, gzip: c.internGzip(hostCompressions(vh, l))}} // compression.go
		c.vhosts[key] = e
	}
	return e.rendered, nil
}

func (c *Renderer) filterChain(l *ir.Listener, vh *ir.VirtualHost, uses filterSet, gz gzipSet) (*listenerv3.FilterChain, error) {
	e := c.chains[vh.Host]
	if e == nil || e.listener != *l || e.cert != vh.Certificate || e.ciphers != vh.TLSCiphers || e.uses != uses || e.gzip != gz || !slices.Equal(e.aliases, vh.Aliases) || e.client != vh.ClientCert {
		msg, err := sniFilterChain(l, vh, c.httpsRoutePrefix+vh.Host, uses, gz)
		if err != nil {
			return nil, err
		}
		e = &chainEntry{listener: *l, cert: vh.Certificate, ciphers: vh.TLSCiphers, uses: uses, gzip: gz, aliases: vh.Aliases, client: vh.ClientCert, msg: msg}
	}
	c.next.chains[vh.Host] = e
	return e.msg, nil
}

// ticketKeySecrets are the session ticket keys of the HTTPS listeners
// that have one, each the same message while its key is.
func (c *Renderer) ticketKeySecrets(m *ir.IR) []*tlsv3.Secret {
	listeners := slices.Clone(m.Listeners)
	for _, o := range m.OwnListeners {
		listeners = append(listeners, o.Listener)
	}
	var out []*tlsv3.Secret
	for _, l := range listeners {
		key := sessionTicketKey(l) // downstream.go
		if key == nil {
			continue
		}
		name := sessionTicketKeySecretName(l.Name)
		e := c.secrets[name]
		if e == nil || !bytes.Equal(e.ticketKey, key) {
			e = &secretEntry{ticketKey: key, msg: sessionTicketKeySecret(name, key)}
		}
		c.next.secrets[name] = e
		out = append(out, e.msg)
	}
	return out
}

func (c *Renderer) secret(cert *ir.Certificate) *tlsv3.Secret {
	e := c.secrets[cert.Name]
	if e == nil || e.cert != cert {
		e = &secretEntry{cert: cert, msg: tlsSecret(cert)}
	}
	c.next.secrets[cert.Name] = e
	return e.msg
}

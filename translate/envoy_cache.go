package translate

import (
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"slices"
)

// envoyCache keeps the Envoy messages rendered by the previous call and
// hands them out again when their inputs are the very same model values
// (the memo keeps those stable while their objects are unchanged). A reused
// message is therefore identical to a fresh rendering. Messages are shared
// with published snapshots, so nobody may modify them.
//
// The maps are updated in place and pruned of what the model no longer has
// once that is half of them: a render costs a lookup per resource, not a new
// map per resource type.
type envoyCache struct {
	opts         Options
	httpListener *listenerv3.Listener
	clusters     map[string]*clusterEntry
	loads        map[string]*loadEntry
	vhosts       map[vhostKey]*vhostEntry
	chains       map[string]*chainEntry
	secrets      map[string]*secretEntry

	// The previous render's backends (a copy) and the clusters and load
	// assignments made of them: when the backends are the same objects in
	// the same order, so are those lists, and an Ingress change at 10,000
	// Ingresses need not look up 100,000 backends twice to find that out.
	lastBackends  []*Backend
	lastClusters  []Cluster
	lastEndpoints []LoadAssignment
	lastHTTP      httpRoutes
	parts         *clusterParts

	next envoyGeneration
}

// httpRoutes is the last plain-HTTP route configuration's virtual hosts,
// model and message side by side.
type httpRoutes struct {
	model []*VirtualHost
	msgs  []*routev3.VirtualHost
}

// envoyGeneration holds what a render used of the few, small kinds that are
// simply rebuilt each time.
type envoyGeneration struct {
	chains  map[string]*chainEntry
	secrets map[string]*secretEntry
}

type clusterEntry struct {
	externalName string
	port         int32
	msg          Cluster
}

type loadEntry struct {
	endpoints []Endpoint
	msg       LoadAssignment
}

type vhostKey struct {
	host string
	tls  bool
}

type vhostEntry struct {
	routes []*Route
	msg    *routev3.VirtualHost
}

type chainEntry struct {
	cert string
	msg  *listenerv3.FilterChain
}

type secretEntry struct {
	cert *Certificate
	msg  *tlsv3.Secret
}

func newEnvoyCache() *envoyCache {
	return &envoyCache{}
}

func (c *envoyCache) render(m *Model, opts Options) (*Resources, error) {
	if opts != c.opts || c.httpListener == nil {
		// Options shape every message: start over.
		*c = envoyCache{
			opts:     opts,
			clusters: map[string]*clusterEntry{},
			loads:    map[string]*loadEntry{},
			vhosts:   map[vhostKey]*vhostEntry{},
			parts:    newClusterParts(),
		}
		l, err := httpListener(opts)
		if err != nil {
			return nil, err
		}
		c.httpListener = l
	}
	c.next = envoyGeneration{chains: map[string]*chainEntry{}, secrets: map[string]*secretEntry{}}
	res := &Resources{
		Listeners: []*listenerv3.Listener{c.httpListener},
		Clusters:  make([]Cluster, 0, len(m.Backends)),
		Endpoints: make([]LoadAssignment, 0, len(m.Backends)),
	}
	res.Routes = append(res.Routes, c.routeConfiguration(HTTPRouteName, m.VirtualHosts, false))
	if err := c.addHTTPS(res, m, opts); err != nil {
		return nil, err
	}
	if c.lastBackends != nil && slices.Equal(m.Backends, c.lastBackends) {
		res.Clusters, res.Endpoints = c.lastClusters, c.lastEndpoints
	} else {
		for _, be := range m.Backends {
			res.Clusters = append(res.Clusters, c.cluster(be))
			if be.ExternalName == "" {
				res.Endpoints = append(res.Endpoints, c.loadAssignment(be))
			}
		}
		c.lastBackends, c.lastClusters, c.lastEndpoints = slices.Clone(m.Backends), res.Clusters, res.Endpoints
	}
	c.chains, c.secrets = c.next.chains, c.next.secrets
	c.next = envoyGeneration{}
	c.prune(m)
	return res, nil
}

// prune drops what the model no longer has, once that is half the entries.
func (c *envoyCache) prune(m *Model) {
	if len(c.clusters) > 2*len(m.Backends)+64 || len(c.loads) > 2*len(m.Backends)+64 {
		live := make(map[string]bool, len(m.Backends))
		for _, be := range m.Backends {
			live[be.Name] = true
		}
		for name := range c.clusters {
			if !live[name] {
				delete(c.clusters, name)
			}
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
}

func (c *envoyCache) cluster(be *Backend) Cluster {
	e := c.clusters[be.Name]
	if e == nil || e.externalName != be.ExternalName || e.port != be.Port {
		e = &clusterEntry{externalName: be.ExternalName, port: be.Port}
		if be.ExternalName != "" {
			e.msg = dnsCluster(be)
		} else {
			e.msg = &EDSCluster{name: be.Name, parts: c.parts}
		}
		c.clusters[be.Name] = e
	}
	return e.msg
}

func (c *envoyCache) loadAssignment(be *Backend) LoadAssignment {
	e := c.loads[be.Name]
	if e == nil || !sameEndpoints(e.endpoints, be.Endpoints) {
		e = &loadEntry{endpoints: be.Endpoints, msg: loadAssignment(be)}
		c.loads[be.Name] = e
	}
	return e.msg
}

// sameEndpoints compares by identity: the memo hands out the same slice for
// as long as the endpoints are unchanged.
func sameEndpoints(a, b []Endpoint) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

func (c *envoyCache) virtualHost(vh *VirtualHost, tls bool) *routev3.VirtualHost {
	key := vhostKey{host: vh.Host, tls: tls}
	e := c.vhosts[key]
	if e == nil || !sameRoutes(e.routes, vh.Routes) {
		e = &vhostEntry{routes: append([]*Route(nil), vh.Routes...), msg: virtualHost(vh, tls)}
		c.vhosts[key] = e
	}
	return e.msg
}

func sameRoutes(a, b []*Route) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (c *envoyCache) filterChain(vh *VirtualHost) (*listenerv3.FilterChain, error) {
	e := c.chains[vh.Host]
	if e == nil || e.cert != vh.Certificate {
		msg, err := sniFilterChain(vh)
		if err != nil {
			return nil, err
		}
		e = &chainEntry{cert: vh.Certificate, msg: msg}
	}
	c.next.chains[vh.Host] = e
	return e.msg, nil
}

func (c *envoyCache) secret(cert *Certificate) *tlsv3.Secret {
	e := c.secrets[cert.Name]
	if e == nil || e.cert != cert {
		e = &secretEntry{cert: cert, msg: tlsSecret(cert)}
	}
	c.next.secrets[cert.Name] = e
	return e.msg
}

// refreshLoadAssignment is loadAssignment outside a render, for the fast
// path: it updates the remembered entry so that the next render reuses it.
func (c *envoyCache) refreshLoadAssignment(be *Backend) LoadAssignment {
	e := c.loads[be.Name]
	if e == nil || !sameEndpoints(e.endpoints, be.Endpoints) {
		e = &loadEntry{endpoints: be.Endpoints, msg: loadAssignment(be)}
		c.loads[be.Name] = e
	}
	return e.msg
}

package gatewayapi

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// made is what one build made that the next may hand out again: the IR's
// contract (the same value for what did not change) lets the renderer
// reuse its work by identity: a backend's load assignment, a cluster's
// message, a host whose routes are the same values. Each host's list of
// routes is still made anew each build.
type made struct {
	backends map[string]madeBackend
	clusters map[string]*ir.Cluster
	routes   map[string]madeRoute // by routeObject.key
	// clientCerts are the listeners' client-certificate validations,
	// which the renderer compares by identity (frontendtls.go).
	clientCerts []*ir.ClientCert
}

// madeBackend is a backend with the EndpointSlices it was read from.
type madeBackend struct {
	be     *ir.Backend
	slices []*kube.EndpointSlice
}

func newMade() *made {
	return &made{backends: map[string]madeBackend{}, clusters: map[string]*ir.Cluster{}, routes: map[string]madeRoute{}}
}

// backend is the backend of the name made last time, when the Service
// port and its EndpointSlices are the same (the State's objects are never
// modified: the same pointers are the same objects); nil otherwise.
func (m *made) backend(id string, port kube.ServicePort, now []*kube.EndpointSlice) *ir.Backend {
	if m == nil {
		return nil
	}
	p, ok := m.backends[id]
	if !ok || p.be.Port != port.Port || p.be.PortName != port.Name || !slices.Equal(p.slices, now) {
		return nil
	}
	return p.be
}

// clientCert is the validation made last time that equals c, else c.
func (m *made) clientCert(c *ir.ClientCert) *ir.ClientCert {
	if m != nil {
		for _, p := range m.clientCerts {
			if sameClientCert(p, c) {
				return p
			}
		}
	}
	return c
}

// cluster is the cluster of the name made last time; nil when none.
func (m *made) cluster(name string) *ir.Cluster {
	if m == nil {
		return nil
	}
	return m.clusters[name]
}

// madeRoute is a Route's entries as a build made them, with what making
// them read: the next build hands them out again (the same entries, so
// the same IR routes) when the Route is the very same object and nothing
// it read changed, and repeats what making them left behind (problems,
// its unresolved reference, the backends and clusters it named).
type madeRoute struct {
	object  any
	entries []*entry
	reads   *routeReads
}

// routeReads is what making a Route's entries read and left behind.
type routeReads struct {
	services   map[types.NamespacedName]*kube.Service
	backends   map[string]madeBackend
	clusters   map[string]*ir.Cluster
	readGrants bool
	grantList  []*gwapiv1.ReferenceGrant
	// readPolicies says a backend's BackendTLSPolicy was looked for:
	// the policies and the ConfigMaps their CAs are in are then read.
	readPolicies bool
	policyList   []*gwapiv1.BackendTLSPolicy
	configMaps   map[types.NamespacedName]*corev1.ConfigMap
	// readGatewayCerts says a cluster presents its Gateways' client
	// certificate: the Gateways and the Secrets are then read.
	readGatewayCerts bool
	gatewayList      []*gwapiv1.Gateway
	secrets          map[types.NamespacedName]*corev1.Secret
	problems         []ir.Problem
	unresolved       struct{ reason, msg string }
}

func (r *routeReads) service(name types.NamespacedName, svc *kube.Service) {
	if r != nil {
		r.services[name] = svc
	}
}

func (r *routeReads) grants() {
	if r != nil {
		r.readGrants = true
	}
}

func (r *routeReads) policies() {
	if r != nil {
		r.readPolicies = true
	}
}

func (r *routeReads) gatewayCerts() {
	if r != nil {
		r.readGatewayCerts = true
	}
}

func (r *routeReads) cluster(c *ir.Cluster, be *ir.Backend) {
	if r != nil {
		r.clusters[c.Name] = c
		r.backends[be.Name] = madeBackend{be: be}
	}
}

// routeEntries are a Route's entries: the previous build's when they can
// be handed out again, else made (by make) and recorded for the next.
func (b *build) routeEntries(r *routeObject, make func() []*entry) []*entry {
	key := r.key()
	if p, ok := b.prev.route(key); ok && p.object == r.object && b.unchanged(p.reads) {
		b.replay(r, p.reads)
		b.made.routes[key] = p
		return p.entries
	}
	reads := &routeReads{services: map[types.NamespacedName]*kube.Service{}, backends: map[string]madeBackend{}, clusters: map[string]*ir.Cluster{}}
	before := len(b.problems.list)
	b.reading = reads
	entries := make()
	b.reading = nil
	reads.problems = slices.Clone(b.problems.list[before:])
	if f := b.routeFacts(r); f.unresolved != "" {
		reads.unresolved.reason, reads.unresolved.msg = f.unresolved, f.unresolvedMsg
	}
	if reads.readGrants {
		reads.grantList = b.objs.ReferenceGrants
	}
	if reads.readPolicies {
		reads.policyList, reads.configMaps = b.objs.BackendTLSPolicies, b.st.ConfigMaps
	}
	if reads.readGatewayCerts {
		reads.gatewayList, reads.secrets = b.objs.Gateways, b.st.Secrets
	}
	for id := range reads.backends {
		reads.backends[id] = b.made.backends[id] // with the slices it was read from
	}
	b.made.routes[key] = madeRoute{object: r.object, entries: entries, reads: reads}
	return entries
}

// unchanged says whether nothing a Route's entries read changed: the
// Services it looked up, the EndpointSlices of its backends, and the
// ReferenceGrants when it consulted them.
func (b *build) unchanged(reads *routeReads) bool {
	for name, svc := range reads.services {
		if b.st.Services[name] != svc {
			return false
		}
	}
	for _, mb := range reads.backends {
		if !slices.Equal(mb.slices, b.st.EndpointSlices[mb.be.Service]) {
			return false
		}
	}
	if reads.readPolicies && (!slices.Equal(reads.policyList, b.objs.BackendTLSPolicies) || !sameOrBothEmpty(reads.configMaps, b.st.ConfigMaps)) {
		return false
	}
	if reads.readGatewayCerts && (!slices.Equal(reads.gatewayList, b.objs.Gateways) || !sameOrBothEmpty(reads.secrets, b.st.Secrets)) {
		return false
	}
	return !reads.readGrants || slices.Equal(reads.grantList, b.objs.ReferenceGrants)
}

// sameOrBothEmpty is same, where two empty maps count as the same.
func sameOrBothEmpty[K comparable, V any](a, c map[K]V) bool {
	return len(a) == 0 && len(c) == 0 || same(a, c)
}

// replay leaves behind what making the entries did: their backends and
// clusters listed, their problems reported, their unresolved reference
// in the Route's status.
func (b *build) replay(r *routeObject, reads *routeReads) {
	for id, mb := range reads.backends {
		b.backends[id] = mb.be
		b.made.backends[id] = mb
	}
	for name, c := range reads.clusters {
		b.clusters[name] = c
	}
	for _, p := range reads.problems {
		b.problems.add(p.Kind, p.Namespace, p.Name, p.Reason, "%s", p.Message)
	}
	if u := reads.unresolved; u.reason != "" {
		b.unresolved(r, u.reason, u.msg)
	}
}

// route is the Route of the key as the last build made it.
func (m *made) route(key string) (madeRoute, bool) {
	if m == nil {
		return madeRoute{}, false
	}
	p, ok := m.routes[key]
	return p, ok
}

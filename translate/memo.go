package translate

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
)

// memo remembers the work of the previous model build so that the next one
// only redoes what changed. It relies on the objects in a State never being
// mutated: an updated object is a new pointer (informer caches and the file
// source both work that way), so pointer equality means "unchanged". Every
// cached value is exactly what a fresh computation would give, so results
// never depend on what was built before.
//
// Each build keeps only the entries it used, so nothing outlives its object.
type memo struct {
	fragments map[types.NamespacedName]*fragment
	certs     map[types.NamespacedName]certEntry
	eps       map[string]*endpointsEntry

	nextFragments map[types.NamespacedName]*fragment
	nextCerts     map[types.NamespacedName]certEntry
	nextEndpoints map[string]*endpointsEntry
}

type certEntry struct {
	secret *corev1.Secret
	result certResult
}

type endpointsEntry struct {
	slices   []*discoveryv1.EndpointSlice
	portName string
	result   []Endpoint
}

func newMemo() *memo {
	return &memo{}
}

func (m *memo) buildModel(st *kube.State, opts Options) *Model {
	m.nextFragments = make(map[types.NamespacedName]*fragment, len(st.Ingresses))
	m.nextCerts = make(map[types.NamespacedName]certEntry, len(m.certs))
	m.nextEndpoints = make(map[string]*endpointsEntry, len(m.eps))
	mg := &merger{
		memo:     m,
		state:    st,
		vhosts:   map[string]*VirtualHost{},
		seen:     map[routeKey]types.NamespacedName{},
		backends: map[string]*Backend{},
		tls:      map[string]tlsHost{},
		certs:    map[string]*Certificate{},
	}
	for _, ing := range byAge(st.Ingresses) {
		name := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		f := m.fragments[name]
		if f == nil || !f.reusable(ing, st) {
			f = buildFragment(ing, st, opts)
		}
		m.nextFragments[name] = f
		mg.add(f)
	}
	model := mg.model()
	m.fragments, m.certs, m.eps = m.nextFragments, m.nextCerts, m.nextEndpoints
	m.nextFragments, m.nextCerts, m.nextEndpoints = nil, nil, nil
	return model
}

// certificate validates a Secret, once per Secret version.
func (m *memo) certificate(name types.NamespacedName, secret *corev1.Secret) certResult {
	if e, ok := m.nextCerts[name]; ok {
		return e.result
	}
	e, ok := m.certs[name]
	if !ok || e.secret != secret {
		e = certEntry{secret: secret, result: checkCertificate(name, secret)}
	}
	m.nextCerts[name] = e
	return e.result
}

// endpoints returns a backend's ready endpoints, recomputed only when one of
// the Service's EndpointSlices changed. The returned slice is shared: the
// Envoy step uses its identity to reuse the load assignment built from it.
func (m *memo) endpoints(ref *backendRef, slices []*discoveryv1.EndpointSlice) []Endpoint {
	if e, ok := m.nextEndpoints[ref.name]; ok {
		return e.result
	}
	e := m.eps[ref.name]
	if e == nil || e.portName != ref.port.Name || !sameSlices(e.slices, slices) {
		e = &endpointsEntry{slices: slices, portName: ref.port.Name, result: readyEndpoints(slices, ref.port)}
	}
	m.nextEndpoints[ref.name] = e
	return e.result
}

func sameSlices(a, b []*discoveryv1.EndpointSlice) bool {
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

// refreshEndpoints is endpoints outside a build, for the fast path: it
// updates the remembered entry so that the next build reuses it.
func (m *memo) refreshEndpoints(be *Backend, slices []*discoveryv1.EndpointSlice) []Endpoint {
	e := m.eps[be.Name]
	if e == nil || e.portName != be.portName || !sameSlices(e.slices, slices) {
		e = &endpointsEntry{slices: slices, portName: be.portName, result: readyEndpoints(slices, corev1.ServicePort{Name: be.portName, Port: be.Port})}
		if m.eps == nil {
			m.eps = map[string]*endpointsEntry{}
		}
		m.eps[be.Name] = e
	}
	return e.result
}

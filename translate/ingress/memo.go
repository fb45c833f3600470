package ingress

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/internal/listdiff"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/endpoints"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// memo remembers the work of the previous model build so that the next one
// only redoes what changed. It relies on the objects in a State never being
// mutated: an updated object is a new pointer (informer caches and the file
// source both work that way), so pointer equality means "unchanged". Every
// remembered value is exactly what a fresh computation would give, so results
// never depend on what was built before (TestTranslatorMatchesFreshTranslation
// holds it to that).
//
// What is remembered:
//   - per Ingress, its fragment (valid while every object it read, Services
//     and Secrets, is the same object and the Ingress is too, or differs
//     only where a fragment never reads: see kube.SpecEqual);
//   - per host, the merge of the fragments that mention it (redone when one
//     of them changes, or a Secret it asked for does);
//   - per cluster, the IR value (reused while its ref is the same);
//   - per backend, its ready endpoints (redone when its EndpointSlices do);
//   - per Secret, whether it holds a usable certificate.
type memo struct {
	reg *annotations.Registry
	// defaultPolicy is the route policy every Ingress that sets nothing
	// shares (Options.defaultPolicy).
	defaultPolicy *ir.RoutePolicy
	fragments     map[types.NamespacedName]*fragment
	hosts         map[string]*hostEntry
	hostNames     *sortedSet      // hosts with a virtual host
	tlsHosts      map[string]bool // hosts whose merge read Secrets
	// aliasHosts are the hosts whose merge asks for aliases (alias.go).
	aliasHosts map[string]bool

	clusterRefs  map[string]*clusterRef // every cluster some host routes to
	clusterUsers map[string]int         // how many hosts route to it
	clusterNames *sortedSet             // keys of clusterRefs

	// Per backend name; updated in place, and pruned of backends no host
	// routes to any more once they make up half of the entries, so that a
	// build costs a lookup per backend rather than a new map.
	backends map[string]*ir.Backend
	eps      map[string]*endpointsEntry
	certs    map[types.NamespacedName]certEntry

	// What the previous build read, for the case that dominates changes at
	// scale: an Ingress edited while Services and EndpointSlices stay as
	// they were. Sources hand over the very same maps for parts of the
	// cluster that did not change, so the maps' identity says whether
	// anything in them did; when nothing did and no host changed its
	// backends, the previous backend list is still right, and checking its
	// 100,000 entries one by one (at 10,000 Ingresses) is work saved.
	prev         kube.State // the maps of the previous build's State
	lastClusters []*ir.Cluster
	lastBackends []*ir.Backend
	// lastBackendOf is, for each of lastClusters, the position of its
	// backend in lastBackends.
	lastBackendOf []int32
	// changedRefs names the clusters added, removed or re-resolved since
	// the previous build (none: the previous cluster list stands), so that
	// a build with the same Services and EndpointSlices splices them into
	// the previous lists (spliceClusters).
	changedRefs map[string]bool
	// dropped holds, within one build, the clusters no host routes to any
	// more, so that one another host takes up is not counted as a change.
	dropped map[string]*clusterRef

	// ingresses is the list the previous build read. Compared with the
	// next one by identity, it tells the few Ingresses that changed from
	// the many that did not without reading any of them (at 10,000
	// Ingresses, looking each one up by name was most of a build).
	ingresses []*networkingv1.Ingress
	// vhosts is the previous model's virtual hosts, in hostNames order;
	// a build replaces those of the hosts it merged again.
	vhosts []*ir.VirtualHost
	// The fragments and hosts with problems to report (and fragments with
	// TLS, whose problems depend on Secrets), so that a build visits those
	// rather than every one.
	problemFragments map[types.NamespacedName]*fragment
	problemHosts     map[string]bool

	// config is the controller ConfigMap of configName, parsed
	// (controllerconfig.go) by configTable.
	config      *controllerConfig
	configName  types.NamespacedName
	configTable *configmap.Table
}

// maxChangedIngresses bounds the Ingresses a build looks at one by one;
// past it, every Ingress is checked, which costs less than many lookups.
const maxChangedIngresses = 256

type certEntry struct {
	secret *corev1.Secret
	result certResult
}

type endpointsEntry struct {
	slices   []*kube.EndpointSlice
	portName string
	result   []ir.Endpoint
}

func newMemo(reg *annotations.Registry) *memo {
	return &memo{
		reg:           reg,
		defaultPolicy: &ir.RoutePolicy{Retries: defaultRetries(false)},
		fragments:     map[types.NamespacedName]*fragment{},
		hosts:         map[string]*hostEntry{},
		tlsHosts:      map[string]bool{},
		aliasHosts:    map[string]bool{},
		clusterRefs:   map[string]*clusterRef{},
		clusterUsers:  map[string]int{},
		hostNames:     newSortedSet(),
		clusterNames:  newSortedSet(),
		backends:      map[string]*ir.Backend{},
		certs:         map[types.NamespacedName]certEntry{},
		eps:           map[string]*endpointsEntry{},
		dropped:       map[string]*clusterRef{},
		changedRefs:   map[string]bool{},

		problemFragments: map[types.NamespacedName]*fragment{},
		problemHosts:     map[string]bool{},
	}
}

func (m *memo) buildModel(st *kube.State, opts Options) *ir.IR {
	// The controller ConfigMap, parsed once per version of it; the
	// fragments that read it (all, when it is named) are built again when
	// it changes, as with any object they read.
	opts.config = m.controllerConfig(st, opts.ConfigMap, opts.NginxDefaults)
	opts.defaultPolicy = m.defaultPolicy
	if p := opts.config.defaultPolicy(); p != nil {
		opts.defaultPolicy = p // retry-non-idempotent, proxy-set-headers
	}
	dirty := map[string]bool{}
	// A fragment depends on its Ingress and on the objects it read: with
	// the same Services, Secrets and ConfigMaps, only the Ingresses that
	// are new objects need a look.
	if !sameMap(st.Services, m.prev.Services) || !sameMap(st.Secrets, m.prev.Secrets) || !sameMap(st.ConfigMaps, m.prev.ConfigMaps) ||
		!m.updateChanged(st, opts, dirty) {
		m.updateAll(st, opts, dirty)
	}
	m.ingresses = st.Ingresses
	m.forgetStaleCertificates(st.Secrets)
	for host := range m.tlsHosts {
		if e := m.hosts[host]; e != nil && e.merged != nil && e.merged.secretsChanged(st.Secrets) {
			dirty[host] = true
		}
	}
	for host := range dirty {
		m.remerge(host, st.Secrets)
	}
	m.settleAliases(dirty)
	for name := range m.dropped {
		m.changedRefs[name] = true
	}
	clear(m.dropped)
	m.hostNames.settle()
	m.clusterNames.settle()
	out := m.model(st, dirty)
	if c := opts.config; c != nil && len(c.problems) > 0 {
		out.Problems = append(out.Problems, c.problems...)
		sortProblems(out.Problems)
	}
	return out
}

// updateChanged updates the fragments of the Ingresses that differ from
// the previous build's, found by walking both lists by identity. It reports
// false, having changed nothing, when the lists are too different for that
// to pay.
func (m *memo) updateChanged(st *kube.State, opts Options, dirty map[string]bool) bool {
	prev, cur := m.ingresses, st.Ingresses
	if prev == nil {
		return false
	}
	var added, removed []*networkingv1.Ingress
	listdiff.Walk(prev, cur, func(int, int) {},
		func(i int) { added = append(added, cur[i]) },
		func(k int) { removed = append(removed, prev[k]) })
	if len(added)+len(removed) > maxChangedIngresses {
		return false
	}
	// An Ingress both removed and added is one updated (or moved).
	gone := make(map[types.NamespacedName]bool, len(removed))
	for _, ing := range removed {
		gone[types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}] = true
	}
	for _, ing := range added {
		name := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		delete(gone, name)
		old := m.fragments[name]
		if old != nil && kube.SpecEqual(old.ingress, ing) {
			continue
		}
		f := buildFragment(ing, st, opts, m.reg)
		m.replaceFragment(name, old, f, dirty)
		m.fragments[name] = f
	}
	for name := range gone {
		if old := m.fragments[name]; old != nil {
			m.replaceFragment(name, old, nil, dirty)
			delete(m.fragments, name)
		}
	}
	return true
}

// updateAll checks every Ingress's fragment: the first build, and any
// after Services, Secrets or ConfigMaps changed, since fragments read them.
func (m *memo) updateAll(st *kube.State, opts Options, dirty map[string]bool) {
	next := make(map[types.NamespacedName]*fragment, len(st.Ingresses))
	for _, ing := range st.Ingresses {
		name := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		old := m.fragments[name]
		f := old
		if f == nil || !kube.SpecEqual(f.ingress, ing) || !f.reads.unchanged(st, &m.prev) {
			f = buildFragment(ing, st, opts, m.reg)
		}
		next[name] = f
		if f != old {
			m.replaceFragment(name, old, f, dirty)
		}
	}
	for name, old := range m.fragments {
		if _, ok := next[name]; !ok {
			m.replaceFragment(name, old, nil, dirty)
		}
	}
	m.fragments = next
}

// replaceFragment swaps an Ingress's fragment (old or new may be nil) in
// the hosts it mentions, marking them for a new merge.
func (m *memo) replaceFragment(name types.NamespacedName, old, new *fragment, dirty map[string]bool) {
	delete(m.problemFragments, name)
	if new != nil && (len(new.problems) > 0 || len(new.tls) > 0) {
		m.problemFragments[name] = new
	}
	for host := range hostsOf(old) {
		dirty[host] = true
		if e := m.hosts[host]; e != nil {
			delete(e.contributors, name)
		}
	}
	for host := range hostsOf(new) {
		dirty[host] = true
		e := m.hosts[host]
		if e == nil {
			e = &hostEntry{contributors: map[types.NamespacedName]*fragment{}}
			m.hosts[host] = e
		}
		e.contributors[name] = new
	}
}

// remerge merges one host again and updates what depends on it.
func (m *memo) remerge(host string, secrets map[types.NamespacedName]*corev1.Secret) {
	e := m.hosts[host]
	var before, after *hostMerge
	if e != nil {
		before = e.merged
		if len(e.contributors) == 0 {
			delete(m.hosts, host)
		} else {
			e.merged = m.mergeHost(host, e, secrets)
			after = e.merged
		}
	}
	if before != nil {
		for _, ref := range before.clusters {
			if m.clusterUsers[ref.name]--; m.clusterUsers[ref.name] == 0 {
				m.dropped[ref.name] = m.clusterRefs[ref.name]
				delete(m.clusterUsers, ref.name)
				delete(m.clusterRefs, ref.name)
				m.clusterNames.remove(ref.name)
			}
		}
	}
	if after != nil {
		for _, ref := range after.clusters {
			if m.clusterUsers[ref.name] == 0 {
				m.clusterNames.add(ref.name)
			}
			m.clusterUsers[ref.name]++
			old := m.clusterRefs[ref.name]
			if old == nil {
				// Dropped by another host of this build and taken up
				// here: only a change if it resolves differently.
				old = m.dropped[ref.name]
				delete(m.dropped, ref.name)
			}
			if old == nil || !old.sameAs(ref) {
				m.changedRefs[ref.name] = true
			} else {
				ref = old // the same cluster: keep the ref its IR value came from
			}
			m.clusterRefs[ref.name] = ref
		}
	}
	if after != nil && after.vhost != nil {
		m.hostNames.add(host)
	} else {
		m.hostNames.remove(host)
	}
	if after != nil && len(after.problems) > 0 {
		m.problemHosts[host] = true
	} else {
		delete(m.problemHosts, host)
	}
	if after != nil && len(after.secrets) > 0 {
		m.tlsHosts[host] = true
	} else {
		delete(m.tlsHosts, host)
	}
	if after != nil && len(after.aliases) > 0 {
		m.aliasHosts[host] = true
	} else {
		delete(m.aliasHosts, host)
	}
}

// model assembles the IR from the remembered pieces (listeners are the
// Builder's).
func (m *memo) model(st *kube.State, dirty map[string]bool) *ir.IR {
	model := &ir.IR{VirtualHosts: m.virtualHosts(dirty)}
	// Certificates come from hosts that read Secrets, in host order (the
	// last of one name wins, as it always has).
	certs := map[string]*ir.Certificate{}
	for _, host := range slices.Sorted(maps.Keys(m.tlsHosts)) {
		if e := m.hosts[host]; e != nil && e.merged != nil && e.merged.vhost != nil && e.merged.cert != nil {
			certs[e.merged.cert.Name] = e.merged.cert
		}
	}
	// Hosts with no surviving route still have problems to tell.
	for host := range m.problemHosts {
		model.Problems = append(model.Problems, m.hosts[host].merged.problems...)
	}
	for _, c := range certs {
		model.Certificates = append(model.Certificates, c)
	}
	sort.Slice(model.Certificates, func(i, j int) bool { return model.Certificates[i].Name < model.Certificates[j].Name })

	// IR lists are never modified, so a build hands out the previous
	// build's lists again for what did not change: clusters depend only on
	// their refs; backends on their refs, Services and EndpointSlices.
	sameObjects := sameMap(st.Services, m.prev.Services) && sameMap(st.EndpointSlices, m.prev.EndpointSlices)
	// Or the same Services and EndpointSlices said to differ from the
	// previous build's in a few Services' only.
	var movedServices []types.NamespacedName
	knownObjects := sameObjects
	if since := st.SlicesSince; !sameObjects && since != nil && sameMap(st.Services, m.prev.Services) &&
		sameMap(since.Base, m.prev.EndpointSlices) && len(since.Services) <= maxSplicedClusters {
		movedServices, knownObjects = since.Services, true
	}
	switch {
	case m.lastBackends != nil && len(m.changedRefs) == 0 && sameObjects:
		model.Clusters, model.Backends = m.lastClusters, m.lastBackends
	case m.lastBackends != nil && knownObjects && len(m.changedRefs) <= maxSplicedClusters:
		model.Clusters, model.Backends, m.lastBackendOf = m.spliceClusters(st, movedServices)
	default:
		reuseClusters := m.lastClusters != nil && len(m.changedRefs) == 0
		if reuseClusters {
			model.Clusters = m.lastClusters
		} else {
			model.Clusters = make([]*ir.Cluster, 0, len(m.clusterNames.sorted))
		}
		model.Backends = make([]*ir.Backend, 0, len(m.clusterNames.sorted))
		backendOf := make([]int32, 0, len(m.clusterNames.sorted))
		for _, name := range m.clusterNames.sorted {
			ref := m.clusterRefs[name]
			if !reuseClusters {
				model.Clusters = append(model.Clusters, ref.cluster())
			}
			// A backend's clusters are adjacent in name order (their names
			// are its name, or its name, "/" and a hash), and backends
			// come in name order too.
			if n := len(model.Backends); n == 0 || model.Backends[n-1].Name != ref.backend.name {
				model.Backends = append(model.Backends, m.backend(ref.backend, st))
			}
			backendOf = append(backendOf, int32(len(model.Backends)-1))
		}
		m.lastBackendOf = backendOf
	}
	if len(m.changedRefs) > maxSplicedClusters {
		m.changedRefs = map[string]bool{} // a map never shrinks: not one of every cluster kept
	} else {
		clear(m.changedRefs)
	}
	m.lastClusters, m.lastBackends = model.Clusters, model.Backends
	m.prev = kube.State{Ingresses: st.Ingresses, Services: st.Services, EndpointSlices: st.EndpointSlices, Secrets: st.Secrets, ConfigMaps: st.ConfigMaps}
	if live := len(m.clusterRefs); len(m.backends) > 2*live+64 || len(m.eps) > 2*live+64 {
		inUse := make(map[string]bool, live)
		for _, ref := range m.clusterRefs {
			inUse[ref.backend.name] = true
		}
		pruneTo(m.backends, inUse)
		pruneTo(m.eps, inUse)
	}

	for _, f := range m.problemFragments {
		model.Problems = append(model.Problems, f.problems...)
		if len(f.tls) > 0 {
			model.Problems = append(model.Problems, m.tlsProblems(f, st.Secrets)...)
		}
	}
	sortProblems(model.Problems)
	return model
}

// maxSplicedClusters bounds the clusters changed since the previous build
// that spliceClusters looks up one by one.
const maxSplicedClusters = 256

// spliceClusters is the clusters and backends of a build whose Services
// are those of the previous one, whose EndpointSlices are too but for
// those of moved, and whose clusters differ from its in the few of
// changedRefs: the previous lists, walked beside the new cluster names,
// with those clusters and the backends of them and of moved looked up. At
// 10,000 Ingresses a path switched to another Service adds one cluster
// among 100,000, and an EndpointSlice change touches one Service's
// backends, whose lookups one by one cost more than the rest of the build.
// The result is the full loop's (model) with the same values: an
// unchanged cluster's backend, read from the same Service and
// EndpointSlices, is the one it had. It also returns each cluster's
// backend position.
func (m *memo) spliceClusters(st *kube.State, moved []types.NamespacedName) ([]*ir.Cluster, []*ir.Backend, []int32) {
	changed := slices.Sorted(maps.Keys(m.changedRefs))
	names := m.clusterNames.sorted
	stale := m.backendsOf(moved)
	clusters := make([]*ir.Cluster, 0, len(names))
	backends := make([]*ir.Backend, 0, len(m.lastBackends)+len(changed))
	backendOf := make([]int32, 0, len(names))
	old, k, c := m.lastClusters, 0, 0
	for _, name := range names {
		for k < len(old) && old[k].Name < name {
			k++
		}
		for c < len(changed) && changed[c] < name {
			c++
		}
		var cl *ir.Cluster
		var be *ir.Backend
		if (c == len(changed) || changed[c] != name) && k < len(old) && old[k].Name == name {
			cl = old[k]
			if b := m.lastBackendOf[k]; stale == nil || !stale[b] {
				be = m.lastBackends[b]
			}
		} else {
			cl = m.clusterRefs[name].cluster()
		}
		clusters = append(clusters, cl)
		if n := len(backends); n == 0 || backends[n-1].Name != cl.Backend {
			if be == nil {
				be = m.backend(m.clusterRefs[name].backend, st)
			}
			backends = append(backends, be)
		}
		backendOf = append(backendOf, int32(len(backends)-1))
	}
	return clusters, backends, backendOf
}

// backendsOf marks the previous build's backends of the Services given:
// backends are in name order, and a backend's name starts with its
// Service's namespace/name/ (ir.BackendName), so each Service's are found
// by a binary search.
func (m *memo) backendsOf(services []types.NamespacedName) []bool {
	if len(services) == 0 {
		return nil
	}
	marked := make([]bool, len(m.lastBackends))
	for _, svc := range services {
		prefix := svc.Namespace + "/" + svc.Name + "/"
		i, _ := slices.BinarySearchFunc(m.lastBackends, prefix, func(be *ir.Backend, p string) int { return strings.Compare(be.Name, p) })
		for ; i < len(m.lastBackends) && strings.HasPrefix(m.lastBackends[i].Name, prefix); i++ {
			marked[i] = true
		}
	}
	return marked
}

// virtualHosts lists the hosts' virtual hosts in hostNames order: the
// previous list with those of the hosts merged again (dirty) replaced,
// inserted or removed, or, after many changes, the list made anew.
func (m *memo) virtualHosts(dirty map[string]bool) []*ir.VirtualHost {
	if m.vhosts == nil || len(dirty) > maxChangedIngresses {
		out := make([]*ir.VirtualHost, 0, len(m.hostNames.sorted))
		for _, host := range m.hostNames.sorted {
			out = append(out, m.hosts[host].merged.vhost)
		}
		m.vhosts = out
		return out
	}
	if len(dirty) == 0 {
		return m.vhosts // models are never modified, so they may share it
	}
	out := slices.Clone(m.vhosts)
	for host := range dirty {
		var vh *ir.VirtualHost
		if e := m.hosts[host]; e != nil && e.merged != nil {
			vh = e.merged.vhost
		}
		i, found := slices.BinarySearchFunc(out, host, func(v *ir.VirtualHost, h string) int { return strings.Compare(v.Host, h) })
		switch {
		case found && vh != nil:
			out[i] = vh
		case found:
			out = slices.Delete(out, i, i+1)
		case vh != nil:
			out = slices.Insert(out, i, vh)
		}
	}
	m.vhosts = out
	return out
}

// backend returns the Backend for a reference, the same value as last time
// when nothing about it changed.
func (m *memo) backend(ref *backendRef, st *kube.State) *ir.Backend {
	var eps []ir.Endpoint
	if ref.externalName == "" {
		eps = m.endpoints(ref, st.EndpointSlices[ref.service])
	}
	be := m.backends[ref.name]
	if be == nil || be.Service != ref.service || be.Port != ref.port.Port || be.PortName != ref.port.Name ||
		be.ExternalName != ref.externalName || !ir.SameEndpoints(be.Endpoints, eps) {
		be = &ir.Backend{Name: ref.name, Service: ref.service, Port: ref.port.Port, ExternalName: ref.externalName, PortName: ref.port.Name, Endpoints: eps}
		m.backends[ref.name] = be
	}
	return be
}

// certificate validates a Secret, once per Secret version.
func (m *memo) certificate(name types.NamespacedName, secret *corev1.Secret) certResult {
	e, ok := m.certs[name]
	if !ok || e.secret != secret {
		e = certEntry{secret: secret, result: checkCertificate(name, secret)}
		m.certs[name] = e
	}
	return e.result
}

// forgetStaleCertificates drops validations of Secrets that changed or went.
func (m *memo) forgetStaleCertificates(secrets map[types.NamespacedName]*corev1.Secret) {
	for name, e := range m.certs {
		if secrets[name] != e.secret {
			delete(m.certs, name)
		}
	}
}

// endpoints returns a backend's ready endpoints, recomputed only when one of
// the Service's EndpointSlices changed. The returned slice is shared: the
// Envoy step uses its identity to reuse the load assignment built from it.
func (m *memo) endpoints(ref *backendRef, slices []*kube.EndpointSlice) []ir.Endpoint {
	e := m.eps[ref.name]
	if e == nil || e.portName != ref.port.Name || !sameSlices(e.slices, slices) {
		e = &endpointsEntry{slices: slices, portName: ref.port.Name, result: endpoints.Ready(slices, ref.port)}
		m.eps[ref.name] = e
	}
	return e.result
}

// refreshEndpoints is endpoints outside a build, for the fast path: it
// updates the remembered entry so that the next build reuses it.
func (m *memo) refreshEndpoints(be *ir.Backend, slices []*kube.EndpointSlice) []ir.Endpoint {
	e := m.eps[be.Name]
	if e == nil || e.portName != be.PortName || !sameSlices(e.slices, slices) {
		e = &endpointsEntry{slices: slices, portName: be.PortName, result: endpoints.Ready(slices, kube.ServicePort{Name: be.PortName, Port: be.Port})}
		m.eps[be.Name] = e
	}
	return e.result
}

// sameMap says whether a and b are the same map, not merely equal ones.
func sameMap[K comparable, V any](a, b map[K]V) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func sameSlices(a, b []*kube.EndpointSlice) bool {
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

// pruneTo deletes the entries of m whose keys live does not have.
func pruneTo[V any](m map[string]V, live map[string]bool) {
	for k := range m {
		if _, ok := live[k]; !ok {
			delete(m, k)
		}
	}
}

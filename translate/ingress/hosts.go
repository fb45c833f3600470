package ingress

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Merging happens host by host: conflicts (same host, path and type), the
// choice of a host's certificate and the routes of its virtual host depend
// only on the Ingresses that mention that host. So when an Ingress changes,
// only its hosts are merged again.

// hostEntry is one host: the fragments that mention it and their merge.
type hostEntry struct {
	contributors map[types.NamespacedName]*fragment
	merged       *hostMerge
}

// hostMerge is the merge of one host's fragments, oldest Ingress first.
type hostMerge struct {
	vhost    *ir.VirtualHost // nil when no route survived
	clusters []*clusterRef
	problems []ir.Problem
	cert     *ir.Certificate // the certificate serving the host, if any
	// secrets are the Secrets the host's TLS entries asked for, as they were,
	// so that a rotated or fixed Secret brings a new merge.
	secrets map[types.NamespacedName]*corev1.Secret
	// aliases are those the host asks for; the virtual host has those that
	// stand (alias.go).
	aliases []string
}

// hostsOf lists the hosts a fragment mentions, in routes or in spec.tls.
func hostsOf(f *fragment) map[string]bool {
	hosts := map[string]bool{}
	if f == nil {
		return hosts
	}
	for _, hr := range f.routes {
		hosts[hr.host] = true
	}
	for _, req := range f.tls {
		for _, h := range req.hosts {
			hosts[h] = true
		}
	}
	wwwHosts(f, hosts)
	return hosts
}

// mergeHost merges one host's fragments.
func (m *memo) mergeHost(host string, e *hostEntry, secrets map[types.NamespacedName]*corev1.Secret) *hostMerge {
	frags := make([]*fragment, 0, len(e.contributors))
	ingresses := make([]*networkingv1.Ingress, 0, len(e.contributors))
	byIngress := make(map[*networkingv1.Ingress]*fragment, len(e.contributors))
	for _, f := range e.contributors {
		ingresses = append(ingresses, f.ingress)
		byIngress[f.ingress] = f
	}
	for _, ing := range byAge(ingresses) {
		frags = append(frags, byIngress[ing])
	}

	out := &hostMerge{aliases: mergeAliases(host, frags)}
	seen := map[routeKey]types.NamespacedName{}
	usedCluster := map[string]bool{}
	var kept []hostRoute
	var errorRoutes []hostRoute // fallback.go
	regexMode := false
	var canaries []*fragment
	for _, f := range frags {
		if f.canary != nil {
			canaries = append(canaries, f) // merged into the mainline below
			continue
		}
		ing := f.ingress
		ingName := types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}
		for _, hr := range f.routes {
			if hr.host != host {
				continue
			}
			m := hr.route.Match
			key := routeKey{host: host, pathType: m.PathType, path: m.Path}
			if owner, dup := seen[key]; dup {
				out.problems = append(out.problems, newProblem(ing, "RuleConflict", "%s: host %q, %s path %q is already served by the older Ingress %s: ignored", hr.where, host, m.PathType, m.Path, owner))
				continue
			}
			seen[key] = ingName
			if hr.cluster != nil {
				for _, c := range hr.cluster.withAggregated() {
					if !usedCluster[c.name] {
						usedCluster[c.name] = true
						out.clusters = append(out.clusters, c)
					}
				}
			}
			if hr.mirror != nil && !usedCluster[hr.mirror.name] && mirrorsTo(hr.route, hr.mirror.name) {
				usedCluster[hr.mirror.name] = true
				out.clusters = append(out.clusters, hr.mirror)
			}
			if out.vhost == nil {
				out.vhost = &ir.VirtualHost{Host: host}
			}
			out.vhost.Routes = append(append(out.vhost.Routes, hr.variants...), hr.route)
			kept = append(kept, hr)
			regexMode = regexMode || hr.nginx.regex
			if er, ok := f.errorRoute(host); ok && hr.route.Policy != nil && hr.route.Policy.ErrorPages != nil {
				errorRoutes = appendErrorRoute(errorRoutes, er)
			}
		}
	}
	if len(canaries) > 0 {
		var refs []*clusterRef
		var problems []ir.Problem
		kept, refs, problems = canaryMerge(host, kept, canaries)
		out.problems = append(out.problems, problems...)
		for _, ref := range refs {
			if !usedCluster[ref.name] {
				usedCluster[ref.name] = true
				out.clusters = append(out.clusters, ref)
			}
		}
		if out.vhost != nil && len(refs) > 0 {
			out.vhost.Routes = out.vhost.Routes[:0]
			for _, hr := range kept {
				out.vhost.Routes = append(append(out.vhost.Routes, hr.variants...), hr.route)
			}
		}
	}
	out.mergeWWWRedirect(host, frags)
	// The certificate: from the oldest entry naming the host exactly, else
	// from the oldest wildcard entry covering it (as ingress-nginx does).
	var certIngress types.NamespacedName
	for _, exact := range []bool{true, false} {
		for _, f := range frags {
			for _, req := range f.tls {
				if !tlsCovers(req.hosts, host, exact) {
					continue
				}
				if out.secrets == nil {
					out.secrets = map[types.NamespacedName]*corev1.Secret{}
				}
				out.secrets[req.secret] = secrets[req.secret]
				res := m.certificate(req.secret, secrets[req.secret])
				if res.err != nil {
					continue // reported once per entry, in tlsProblems
				}
				if out.cert == nil {
					out.cert = res.cert
					certIngress = types.NamespacedName{Namespace: f.ingress.Namespace, Name: f.ingress.Name}
					continue
				}
				if exact && out.cert.Name != res.cert.Name {
					out.problems = append(out.problems, newProblem(f.ingress, "TLSConflict", "%s: host %q already has the certificate %s from the older Ingress %s: ignored", req.where, host, out.cert.Name, certIngress))
				}
			}
		}
	}
	if !regexMode && m.config != nil {
		out.addSlashRedirects(host, frags, kept) // trailingslash.go
	}
	if out.vhost != nil && regexMode {
		var problems []ir.Problem
		out.vhost.Routes, problems = regexRoutes(kept)
		out.problems = append(out.problems, problems...)
		out.clusters = usedClusters(out.clusters, out.vhost.Routes)
		if len(out.vhost.Routes) == 0 {
			out.vhost = nil
		}
	}
	if out.vhost != nil {
		if !regexMode {
			sortRoutes(out.vhost.Routes)
		}
		if out.cert != nil {
			out.vhost.Certificate = out.cert.Name
		}
	}
	out.addErrorRoutes(errorRoutes, usedCluster)
	serverGzip := out.mergeServerSnippet(host, frags, regexMode, m.config.serverSnippet(), m.config.block() != nil) // snippets_server.go
	out.mergeServerGzip(serverGzip, frags, m.config.gzip())                                                         // gzip.go
	out.mergeAppRoot(host, frags)
	out.resolveReselects(kept)              // reselect.go
	out.mergeClientCert(host, frags)        // clientcert.go
	out.resolveClientVerify(host, frags)    // clientverify.go
	out.mergeSSLCiphers(host, frags)        // sslciphers.go
	out.mergePassthrough(host, frags, kept) // passthrough.go
	return out
}

// secretsChanged reports whether any Secret the merge depended on changed.
func (h *hostMerge) secretsChanged(secrets map[types.NamespacedName]*corev1.Secret) bool {
	for name, s := range h.secrets {
		if secrets[name] != s {
			return true
		}
	}
	return false
}

// tlsProblems reports each spec.tls entry whose Secret is unusable, once.
func (m *memo) tlsProblems(f *fragment, secrets map[types.NamespacedName]*corev1.Secret) []ir.Problem {
	var out []ir.Problem
	for _, req := range f.tls {
		if res := m.certificate(req.secret, secrets[req.secret]); res.err != nil {
			out = append(out, newProblem(f.ingress, "InvalidTLSSecret", "%s: %v: hosts %s served over HTTP only", req.where, res.err, strings.Join(req.hosts, ", ")))
		}
	}
	return out
}

// tlsCovers reports whether a spec.tls host list names host exactly (exact)
// or through a wildcard one label up (not exact).
func tlsCovers(hosts []string, host string, exact bool) bool {
	if exact {
		return contains(hosts, host)
	}
	if strings.HasPrefix(host, "*.") {
		return false
	}
	_, parent, ok := strings.Cut(host, ".")
	return ok && contains(hosts, "*."+parent)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedSet is a set of names kept in sorted order. Changes are collected
// and applied by settle: a few by insertion, many (a first build) by one
// sort, so that neither case costs more than it must.
type sortedSet struct {
	sorted  []string
	members map[string]bool
	changed map[string]bool
}

func newSortedSet() *sortedSet {
	return &sortedSet{members: map[string]bool{}, changed: map[string]bool{}}
}

func (s *sortedSet) add(name string) {
	if !s.members[name] {
		s.members[name] = true
		s.changed[name] = true
	}
}

func (s *sortedSet) remove(name string) {
	if s.members[name] {
		delete(s.members, name)
		s.changed[name] = true
	}
}

func (s *sortedSet) settle() {
	if len(s.changed) == 0 {
		return
	}
	if len(s.changed) > 64 {
		s.sorted = s.sorted[:0]
		for name := range s.members {
			s.sorted = append(s.sorted, name)
		}
		sort.Strings(s.sorted)
	} else {
		for name := range s.changed {
			i := sort.SearchStrings(s.sorted, name)
			present := i < len(s.sorted) && s.sorted[i] == name
			switch {
			case s.members[name] && !present:
				s.sorted = append(s.sorted, "")
				copy(s.sorted[i+1:], s.sorted[i:])
				s.sorted[i] = name
			case !s.members[name] && present:
				s.sorted = append(s.sorted[:i], s.sorted[i+1:]...)
			}
		}
	}
	clear(s.changed)
}

// usedClusters keeps the clusters some route forwards to, and those their
// aggregates send to, in order.
func usedClusters(clusters []*clusterRef, routes []*ir.Route) []*clusterRef {
	used := map[string]bool{}
	for _, r := range routes {
		if f := r.Action.Forward; f != nil {
			for _, wc := range f.Clusters {
				used[wc.Cluster] = true
				if wc.TLSCluster != "" {
					used[wc.TLSCluster] = true
				}
			}
		}
		if r.Policy != nil {
			for _, m := range r.Policy.Mirrors {
				used[m.Cluster] = true
			}
		}
	}
	for _, c := range clusters {
		if used[c.name] {
			for _, child := range c.aggregate {
				used[child.name] = true
			}
		}
	}
	out := clusters[:0:0]
	for _, c := range clusters {
		if used[c.name] {
			out = append(out, c)
		}
	}
	return out
}

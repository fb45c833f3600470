package translate

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// merge puts the Gateway API front-end's IR beside the Ingress front-end's,
// for one renderer and one Envoy fleet. With no Gateway API object at all
// (gw nil) it is the Ingress IR itself, so that a cluster of Ingresses
// alone pays nothing.
//
// The rules, each for a reason:
//   - A host both front-ends serve stays the Ingresses' (they were there
//     first, and an Envoy virtual host has one set of routes), and each
//     HTTPRoute whose rules it drops is told so. So is a host that is an
//     Ingress host's alias.
//   - A listener is the Ingress front-end's where both have one on a port
//     (it carries the controller ConfigMap's settings); a port only
//     Gateways use gets the Gateway API front-end's.
//   - The Gateway API front-end's own listeners (a Gateway's port and
//     address of its own) are its alone: no Ingress host is served there,
//     and an Ingress host does not take one of theirs.
//   - Backends, clusters and certificates of one name are the same Service
//     port, policy or Secret in both (the front-ends name them alike): the
//     Ingress front-end's value is kept, so that its identity carries
//     over between builds.
func merge(ing, gw *ir.IR) *ir.IR {
	if gw == nil {
		return ing
	}
	out := *ing
	out.Problems = slices.Clone(ing.Problems)
	out.OwnListeners = gw.OwnListeners

	ports := map[uint32]bool{}
	for _, l := range ing.Listeners {
		ports[l.Port] = true
	}
	out.Listeners = slices.Clone(ing.Listeners)
	for _, l := range gw.Listeners {
		if !ports[l.Port] {
			out.Listeners = append(out.Listeners, l)
		}
	}
	slices.SortStableFunc(out.Listeners, func(a, b *ir.Listener) int { return cmp.Compare(a.Port, b.Port) })

	taken := map[string]string{} // host or alias -> what the Ingresses make of it
	for _, vh := range ing.VirtualHosts {
		taken[vh.Host] = "served by Ingresses"
		for _, a := range vh.Aliases {
			taken[a] = "an alias of the Ingresses' host " + vh.Host
		}
	}
	hosts := gw.VirtualHosts
	if len(taken) > 0 {
		hosts = nil
		for _, vh := range gw.VirtualHosts {
			if why, ok := taken[vh.Host]; ok {
				for _, src := range sources(vh) {
					out.Problems = append(out.Problems, ir.Problem{Kind: src.Kind, Namespace: src.Namespace, Name: src.Name, Reason: "HostConflict",
						Message: fmt.Sprintf("host %s is %s: the Route's rules for it are not served", vh.Host, why)})
				}
				continue
			}
			hosts = append(hosts, vh)
		}
	}
	out.VirtualHosts = mergeByName(ing.VirtualHosts, hosts, func(v *ir.VirtualHost) string { return v.Host })
	if len(hosts) == len(gw.VirtualHosts) {
		// No host dropped: the front-end lists what its hosts use, no
		// more (a Route change thus costs the merge nothing per host).
		out.Clusters = mergeByName(ing.Clusters, gw.Clusters, func(c *ir.Cluster) string { return c.Name })
		out.Backends = mergeByName(ing.Backends, gw.Backends, func(b *ir.Backend) string { return b.Name })
		out.Certificates = mergeByName(ing.Certificates, gw.Certificates, func(c *ir.Certificate) string { return c.Name })
		return mergedProblems(&out, gw)
	}

	// What the Gateway hosts still served use: a dropped host's clusters
	// must not be listed (every cluster listed is one a route forwards or
	// mirrors to, or a host passes its TLS through to).
	usedClusters, usedCerts := map[string]bool{}, map[string]bool{}
	all := slices.Clone(hosts)
	for _, o := range gw.OwnListeners {
		all = append(all, o.VirtualHosts...)
	}
	for _, vh := range all {
		usedCerts[vh.Certificate] = vh.Certificate != ""
		if p := vh.Passthrough; p != nil {
			for _, c := range p.Clusters() {
				usedClusters[c] = true // a TLSRoute's
			}
		}
		for _, r := range vh.Routes {
			if f := r.Action.Forward; f != nil {
				for _, c := range f.Clusters {
					usedClusters[c.Cluster] = true
				}
			}
			if r.Policy != nil {
				for _, m := range r.Policy.Mirrors {
					usedClusters[m.Cluster] = true
				}
			}
		}
	}
	clusters := filter(gw.Clusters, func(c *ir.Cluster) bool { return usedClusters[c.Name] })
	usedBackends := map[string]bool{}
	for _, c := range clusters {
		usedBackends[c.Backend] = true
	}
	out.Clusters = mergeByName(ing.Clusters, clusters, func(c *ir.Cluster) string { return c.Name })
	out.Backends = mergeByName(ing.Backends, filter(gw.Backends, func(b *ir.Backend) bool { return usedBackends[b.Name] }), func(b *ir.Backend) string { return b.Name })
	out.Certificates = mergeByName(ing.Certificates, filter(gw.Certificates, func(c *ir.Certificate) bool { return usedCerts[c.Name] }), func(c *ir.Certificate) string { return c.Name })

	return mergedProblems(&out, gw)
}

// mergedProblems is out with the Gateway API front-end's problems added
// to its own, sorted.
func mergedProblems(out, gw *ir.IR) *ir.IR {
	out.Problems = append(out.Problems, gw.Problems...)
	slices.SortStableFunc(out.Problems, func(a, b ir.Problem) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Message, b.Message), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// sources are the objects whose routes a virtual host serves, once each.
func sources(vh *ir.VirtualHost) []*ir.Object {
	var out []*ir.Object
	seen := map[ir.Object]bool{}
	for _, r := range vh.Routes {
		if r.Source != nil && !seen[*r.Source] {
			seen[*r.Source] = true
			out = append(out, r.Source)
		}
	}
	return out
}

// mergeByName merges two lists sorted by name into one, a's value kept
// where both have a name. With b empty, it is a itself; with a empty, b.
func mergeByName[T any](a, b []T, name func(T) string) []T {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make([]T, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b):
			out = append(out, a[i])
			i++
		case i == len(a):
			out = append(out, b[j])
			j++
		case name(a[i]) < name(b[j]):
			out = append(out, a[i])
			i++
		case name(a[i]) > name(b[j]):
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

func filter[T any](list []T, keep func(T) bool) []T {
	var out []T
	for _, v := range list {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

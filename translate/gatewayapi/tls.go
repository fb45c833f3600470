package gatewayapi

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// kindTLSRoute is TLSRoute's kind, for problems and status.
const kindTLSRoute = "TLSRoute"

// protocolTLS is the group protocol of TLS listeners in Passthrough
// mode, protocolTLSTerminate of those in Terminate mode. They are no IR
// protocol: they are served on Envoy's HTTPS port (or an own listener's),
// as one SNI filter chain per host (ir.Passthrough), beside the HTTPS
// listeners' chains; a terminating chain ends TLS with the listener's
// certificate first.
const (
	protocolTLS          ir.Protocol = "TLS"
	protocolTLSTerminate ir.Protocol = "TLS-terminate"
)

// isTLS says whether a group protocol is a TLS listener's, either mode.
func isTLS(p ir.Protocol) bool { return p == protocolTLS || p == protocolTLSTerminate }

func tlsRouteObject(r *gwapiv1.TLSRoute) *routeObject {
	return &routeObject{kind: kindTLSRoute, namespace: r.Namespace, name: r.Name, created: r.CreationTimestamp,
		generation: r.Generation, parentRefs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
}

// tlsListenerTerminates says whether a TLS listener ends TLS (Terminate,
// the API's default) or passes it through (Passthrough).
func tlsListenerTerminates(tls *gwapiv1.ListenerTLSConfig) (bool, error) {
	mode := gwapiv1.TLSModeTerminate
	if tls != nil && tls.Mode != nil {
		mode = *tls.Mode
	}
	switch mode {
	case gwapiv1.TLSModeTerminate:
		return true, nil
	case gwapiv1.TLSModePassthrough:
		return false, nil
	}
	return false, fmt.Errorf("tls.mode %s on a TLS listener is not supported (Passthrough and Terminate are)", mode)
}

// passthrough is what a TLSRoute passes its hosts' connections to, and,
// through a listener in Terminate mode, the certificate that ends their
// TLS first.
type passthrough struct {
	route       *routeObject
	to          *ir.Passthrough
	certificate string
}

// tlsRoutes attaches every TLSRoute to its TLS listeners' groups, and
// resolves the backend its hosts' connections go to.
func (b *build) tlsRoutes() {
	for _, tr := range b.objs.TLSRoutes {
		r := tlsRouteObject(tr)
		r.object = tr
		atts := b.attach(r)
		if b.routeStatus[r.key()] == nil {
			continue // no parentRef of ours
		}
		// A TLSRoute of ours that attached nowhere is still read, for its
		// references' status and problems.
		to := b.passthroughTo(r, tr)
		for _, a := range atts {
			for _, name := range a.hosts {
				if name == ir.WildcardHost {
					b.problem(r, "PassthroughNeedsHostname", "%s: neither the Route nor the listener has a hostname: TLS passthrough routes by SNI, so it serves nothing there",
						a.listener.where())
					continue
				}
				b.addHit(groupKey(a.listener.set, a.listener.protocol, a.listener.hostname), hit{host: name, route: r, parent: a.parent, gateway: a.listener.gateway})
			}
		}
		b.passthroughOf[r.key()] = to
	}
}

// passthroughTo resolves a TLSRoute's backendRefs: the connections of its
// hosts go to the Service ports of a non-zero weight that resolve, each
// connection to one of them by weight. None resolved: the connections are
// closed (ir.Passthrough.Reject), as Gateway API says of a Route whose
// backends are all invalid.
func (b *build) passthroughTo(r *routeObject, tr *gwapiv1.TLSRoute) *ir.Passthrough {
	if len(tr.Spec.Rules) > 1 {
		b.problem(r, "RulesIgnored", "rules: only the first is served (a TLSRoute has one)")
	}
	var split []ir.PassthroughShare
	for i, rule := range tr.Spec.Rules[:min(1, len(tr.Spec.Rules))] {
		for j, ref := range rule.BackendRefs {
			where := fmt.Sprintf("rules[%d].backendRefs[%d]", i, j)
			be, err := b.backend(r, ref.BackendObjectReference)
			if err != nil {
				reason := reasonOf(err, string(gwapiv1.RouteReasonBackendNotFound))
				b.problem(r, reason, "%s: %v: not served", where, err)
				b.unresolved(r, reason, fmt.Sprintf("%s: %v", where, err))
				continue
			}
			weight := deref(ref.Weight, 1)
			if weight == 0 {
				continue
			}
			cluster := b.cluster(be, nil) // TCP: no HTTP policy
			// Two refs to one Service port are one cluster: their
			// weights add up, as Envoy's split names each cluster once.
			if k := slices.IndexFunc(split, func(s ir.PassthroughShare) bool { return s.Cluster == cluster }); k >= 0 {
				split[k].Weight += uint32(weight)
				continue
			}
			split = append(split, ir.PassthroughShare{Cluster: cluster, Weight: uint32(weight)})
		}
	}
	switch len(split) {
	case 0:
		return &ir.Passthrough{Reject: true}
	case 1:
		return &ir.Passthrough{Cluster: split[0].Cluster}
	}
	return &ir.Passthrough{Split: split}
}

// passthroughs are the hosts TLSRoutes pass through, each to the oldest
// TLSRoute's backend that names it (then the first by namespace/name);
// the others are reported.
func (b *build) passthroughs(set string) map[string]passthrough {
	out := map[string]passthrough{}
	for _, key := range slices.Sorted(maps.Keys(b.groups)) {
		g := b.groups[key]
		if !isTLS(g.protocol) || g.set != set {
			continue
		}
		for _, h := range g.hits {
			p := passthrough{route: h.route, to: b.passthroughOf[h.route.key()]}
			if g.protocol == protocolTLSTerminate && !p.to.Reject {
				terminated := *p.to
				terminated.Terminate = true
				p.to, p.certificate = &terminated, g.certificate
			}
			had, ok := out[h.host]
			switch {
			case !ok:
				out[h.host] = p
			case had.route == h.route:
			case routeOrder(h.route, had.route) < 0:
				out[h.host] = p
				b.problem(had.route, "HostConflict", "host %s is also TLSRoute %s/%s's, which is older (or first by name): not served", h.host, h.route.namespace, h.route.name)
			default:
				b.problem(h.route, "HostConflict", "host %s is also TLSRoute %s/%s's, which is older (or first by name): not served", h.host, had.route.namespace, had.route.name)
			}
		}
	}
	return out
}

// routeOrder orders Routes oldest first, then by kind, namespace and name.
func routeOrder(a, c *routeObject) int {
	return cmp.Or(olderFirst(a, c), cmp.Compare(a.kind, c.kind), cmp.Compare(a.namespace+"/"+a.name, c.namespace+"/"+c.name))
}

// httpsClaims are the Routes that serve a host over HTTPS by name: through
// an HTTPS listener with a hostname, or by a Route hostname that matches
// it. A Route without hostnames on the HTTPS listener without one (a
// catch-all) claims no particular host: a host passed through is simply
// not served there.
func (b *build) httpsClaims(set, name string) []*routeObject {
	g := b.listenerFor(set, name, ir.HTTPS)
	if g == nil {
		return nil
	}
	var out []*routeObject
	for _, h := range g.indexed(name) {
		if h.host == ir.WildcardHost && g.hostname == "" {
			continue
		}
		if _, ok := hostRank(h.host, name); ok && !slices.Contains(out, h.route) {
			out = append(out, h.route)
		}
	}
	return out
}

// passThrough makes vh a host passed through, unless Routes served over
// HTTPS by its name are older than the TLSRoute: Envoy chooses one
// filter chain by SNI, so a host either terminates TLS or passes it
// through. The older claim wins (then the first by kind, namespace and
// name) and the other is reported. Passed through, the host keeps its
// plain HTTP routes only.
func (b *build) passThrough(set string, vh *ir.VirtualHost, p passthrough, plain []*entry) bool {
	claims := b.httpsClaims(set, vh.Host)
	if vh.Certificate != "" && len(claims) > 0 {
		oldest := slices.MinFunc(claims, routeOrder)
		if routeOrder(oldest, p.route) < 0 {
			b.problem(p.route, "HostConflict", "host %s is served over HTTPS (terminated) by %s %s/%s, which is older (or first by name): not passed through",
				vh.Host, oldest.kind, oldest.namespace, oldest.name)
			return false
		}
		for _, c := range claims {
			b.problem(c, "HostConflict", "host %s is passed through by TLSRoute %s/%s, which is older (or first by name): not served over HTTPS",
				vh.Host, p.route.namespace, p.route.name)
		}
	}
	vh.Certificate, vh.ClientCert = p.certificate, nil
	vh.Routes = sides(plain, nil, false)
	vh.Passthrough = p.to
	return true
}

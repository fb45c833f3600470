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
	// byGateway holds our Gateways' programmed listeners; a Gateway of
	// ours with none is present, with none.
	byGateway map[types.NamespacedName][]*listener
	hosts     map[string]*host
	backends  map[string]*ir.Backend
	certs     map[string]*ir.Certificate
	problems  problems
}

// host is what a virtual host gathers from every Route attached to it.
type host struct {
	name        string
	certificate string
	// from is the listener that gave the certificate, for problems.
	from    *listener
	entries []*entry
	// sides are the protocols of the listeners that attached each entry
	// (by entryKey) to the host: a Route attached through HTTPS
	// listeners only is not served over plain HTTP.
	sides map[string]sides
}

// sides is a set of listener protocols.
type sides uint8

const (
	onHTTP sides = 1 << iota
	onHTTPS
)

func sideOf(p ir.Protocol) sides {
	if p == ir.HTTPS {
		return onHTTPS
	}
	return onHTTP
}

// entryKey names an entry: one per Route, rule and match, however many
// listeners attach the Route to a host.
func entryKey(e *entry) string {
	return fmt.Sprintf("%s/%s/%d/%d", e.route.Namespace, e.route.Name, e.rule, e.m)
}

func newBuild(st *kube.State, opts Options) *build {
	objs := st.Gateway
	if objs == nil {
		objs = &kube.GatewayObjects{}
	}
	return &build{st: st, objs: objs, opts: opts, byGateway: map[types.NamespacedName][]*listener{},
		hosts: map[string]*host{}, backends: map[string]*ir.Backend{}, certs: map[string]*ir.Certificate{}}
}

// routes attaches every HTTPRoute and gathers its rules by host.
func (b *build) routes() {
	for _, r := range b.objs.HTTPRoutes {
		atts := b.attach(r)
		if len(atts) == 0 {
			continue
		}
		entries := b.entries(r)
		for _, a := range atts {
			for _, name := range a.hosts {
				h := b.host(name, a.listener, r)
				for _, e := range entries {
					key := entryKey(e)
					if _, ok := h.sides[key]; !ok {
						h.entries = append(h.entries, e)
					}
					h.sides[key] |= sideOf(a.listener.protocol)
				}
			}
		}
	}
}

// host is the virtual host of a name, which an HTTPS listener gives its
// certificate. Envoy chooses one certificate per name: of two HTTPS
// listeners serving a name, the first Gateway's (by namespace and name)
// wins, and the other is reported.
func (b *build) host(name string, l *listener, r *gwapiv1.HTTPRoute) *host {
	h := b.hosts[name]
	if h == nil {
		h = &host{name: name, sides: map[string]sides{}}
		b.hosts[name] = h
	}
	if l.certificate == "" || h.certificate == l.certificate {
		return h
	}
	switch {
	case name == ir.WildcardHost:
		b.problems.add(kindHTTPRoute, r.Namespace, r.Name, "NoHostname",
			"attached through HTTPS %s with no hostname: a certificate is chosen by name, so it is not served over HTTPS", l.where())
	case h.certificate == "":
		h.certificate, h.from = l.certificate, l
	default:
		b.problems.add(kindGateway, l.gateway.Namespace, l.gateway.Name, "CertificateConflict",
			"%s: host %s is already served with certificate %s (Gateway %s/%s): %s is not used for it",
			l.where(), name, h.certificate, h.from.gateway.Namespace, h.from.gateway.Name, l.certificate)
	}
	return h
}

// entries are a Route's IR routes, one per match of each rule (a rule
// without matches has one, of every path), before they are put in a host's
// order. A rule that cannot be applied as written answers 500, reported
// on the Route; its other rules are served.
func (b *build) entries(r *gwapiv1.HTTPRoute) []*entry {
	src := &ir.Object{Kind: kindHTTPRoute, Namespace: r.Namespace, Name: r.Name}
	var out []*entry
	for i, rule := range r.Spec.Rules {
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.HTTPRouteMatch{{}}
		}
		f, ferr := filters(rule.Filters)
		var shares []ir.WeightedCluster
		var invalid uint32
		if ferr == nil && f.redirect == nil {
			shares, invalid = b.shares(r, i, rule.BackendRefs)
		}
		if invalid > 0 && len(shares) > 0 {
			// The IR cannot answer a share of a route's requests with a
			// status: the valid shares take them all (docs/gateway-api.md).
			b.problems.add(kindHTTPRoute, r.Namespace, r.Name, "PartlyResolved",
				"rules[%d]: the shares of unresolved backends go to the others until a share can be answered 500", i)
		}
		for j, m := range matches {
			im, err := match(m)
			// The counts precedence compares are of the matches that
			// count: the first of each name.
			e := &entry{route: r, rule: i, m: j, match: im, method: m.Method != nil, queries: len(im.Query)}
			e.headers = len(im.Headers)
			if e.method {
				e.headers--
			}
			if err == nil {
				err = ferr
			}
			var rt *ir.Route
			if err == nil {
				rt, err = route(im, f, shares)
			}
			if err != nil {
				b.problems.add(kindHTTPRoute, r.Namespace, r.Name, "UnsupportedValue", "rules[%d].matches[%d]: %v: answered 500", i, j, err)
				if im.PathType == "" {
					im = ir.Match{PathType: ir.PathPrefix, Path: "/"}
				}
				rt = &ir.Route{Match: im, Action: ir.Action{Direct: &ir.DirectResponse{Status: 500}}}
			}
			rt.Source = src
			e.irRoute = rt
			out = append(out, e)
		}
	}
	return out
}

// route is one match's IR route: a redirect, or a forward to the rule's
// shares with its header changes and rewrite. No share at all (no
// backendRefs, every weight 0, every backend unresolved) answers 500, as
// Gateway API says.
func route(m ir.Match, f applied, shares []ir.WeightedCluster) (*ir.Route, error) {
	rt := &ir.Route{Match: m}
	p := &ir.RoutePolicy{RequestHeaders: f.requestHeaders, ResponseHeaders: f.responseHeaders}
	switch {
	case f.redirect != nil:
		rd, err := redirect(f.redirect, m)
		if err != nil {
			return nil, err
		}
		rt.Action.Redirect = rd
	case len(shares) == 0:
		rt.Action.Direct = &ir.DirectResponse{Status: 500}
	default:
		rt.Action.Forward = &ir.Forward{Clusters: shares}
		if f.rewrite != nil {
			rw, err := rewrite(f.rewrite, m)
			if err != nil {
				return nil, err
			}
			p.Rewrite = rw
		}
	}
	if p.RequestHeaders != nil || p.ResponseHeaders != nil || p.Rewrite != nil {
		rt.Policy = p
	}
	return rt, nil
}

// routes are the host's IR routes in precedence order, each marked with
// the one protocol it is served on when it is not served on both. A host
// without a certificate is never served over HTTPS: its routes need no
// mark for plain HTTP.
func (h *host) routes() []*ir.Route {
	out := make([]*ir.Route, 0, len(h.entries))
	for _, e := range h.entries {
		s := h.sides[entryKey(e)]
		if h.certificate == "" {
			s |= onHTTPS
		}
		out = append(out, only(e.irRoute, s))
	}
	return out
}

// routesOn are the host's routes served on one side, marked as served
// there only.
func (h *host) routesOn(side sides) []*ir.Route {
	var out []*ir.Route
	for _, e := range h.entries {
		if h.sides[entryKey(e)]&side != 0 {
			out = append(out, only(e.irRoute, side))
		}
	}
	return out
}

// served counts the host's entries served on a side.
func (h *host) served(side sides) int {
	n := 0
	for _, s := range h.sides {
		if s&side != 0 {
			n++
		}
	}
	return n
}

// only is r served on the given sides: r itself on both, else a copy
// that says which.
func only(r *ir.Route, s sides) *ir.Route {
	if s == onHTTP|onHTTPS {
		return r
	}
	c := *r
	c.Only = ir.HTTP
	if s == onHTTPS {
		c.Only = ir.HTTPS
	}
	return &c
}

// covering is the most specific other host with routes over plain HTTP
// that covers name, as Envoy would choose among them: the longest
// wildcard suffix, then ir.WildcardHost; nil when there is none.
func (b *build) covering(name string) *host {
	var best *host
	for other, h := range b.hosts {
		if other == name || h.served(onHTTP) == 0 || (other != ir.WildcardHost && !covers(other, name)) {
			continue
		}
		if best == nil || best.name == ir.WildcardHost || other != ir.WildcardHost && len(other) > len(best.name) {
			best = h
		}
	}
	return best
}

// model is the IR of the build: the hosts in order, each with its entries
// in Gateway API's precedence, and the listeners, clusters, backends and
// certificates they need.
func (b *build) model() *ir.IR {
	out := &ir.IR{Listeners: []*ir.Listener{}, VirtualHosts: []*ir.VirtualHost{}, Clusters: []*ir.Cluster{},
		Backends: []*ir.Backend{}, Certificates: []*ir.Certificate{}}
	address := cmp.Or(b.opts.ListenAddress, "0.0.0.0")
	var http, https bool
	for _, ls := range b.byGateway {
		for _, l := range ls {
			http = http || l.protocol == ir.HTTP
			https = https || l.protocol == ir.HTTPS
		}
	}
	used := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(b.hosts)) {
		slices.SortStableFunc(b.hosts[name].entries, precedence)
	}
	for _, name := range slices.Sorted(maps.Keys(b.hosts)) {
		h := b.hosts[name]
		// A Gateway API wildcard covers any number of labels.
		vh := &ir.VirtualHost{Host: name, Certificate: h.certificate, AnyDepth: strings.HasPrefix(name, "*.")}
		vh.Routes = h.routes()
		if h.served(onHTTP) == 0 {
			// Attached through HTTPS listeners only: over plain HTTP
			// the host is what the HTTP listeners make of it, the
			// routes of the most specific host covering it.
			if c := b.covering(name); c != nil {
				vh.Routes = append(vh.Routes, c.routesOn(onHTTP)...)
			}
		}
		for _, r := range vh.Routes {
			if fw := r.Action.Forward; fw != nil {
				for _, c := range fw.Clusters {
					used[c.Cluster] = true
				}
			}
		}
		if vh.Certificate != "" {
			used["cert:"+vh.Certificate] = true
		}
		out.VirtualHosts = append(out.VirtualHosts, vh)
	}
	for _, id := range slices.Sorted(maps.Keys(b.backends)) {
		if used[id] {
			out.Backends = append(out.Backends, b.backends[id])
			out.Clusters = append(out.Clusters, &ir.Cluster{Name: id, Backend: id})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.certs)) {
		if used["cert:"+id] {
			out.Certificates = append(out.Certificates, b.certs[id])
		}
	}
	// Every virtual host is served on every HTTP listener (the IR has no
	// binding of a host to a listener yet: docs/gateway-api.md).
	if http && b.opts.HTTPPort != 0 {
		out.Listeners = append(out.Listeners, &ir.Listener{Name: HTTPListenerName, Address: address, Port: b.opts.HTTPPort, Protocol: ir.HTTP})
	}
	if https && len(out.Certificates) > 0 {
		out.Listeners = append(out.Listeners, &ir.Listener{Name: HTTPSListenerName, Address: address, Port: b.opts.HTTPSPort, Protocol: ir.HTTPS})
	}
	slices.SortFunc(out.Listeners, func(a, c *ir.Listener) int { return cmp.Compare(a.Port, c.Port) })
	out.Problems = b.problems.sorted()
	return out
}

package envoy

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// renderOwn renders the IR's own listeners (ir.OwnListener): each a
// listener and the route configurations of its hosts alone, by a renderer
// of its own kept across renders, which keeps that listener's renderings
// as this one keeps the shared listeners'. Its route configurations are
// named after it (its name is the plain-HTTP one's, its name and a slash
// before each HTTPS host's), so that a host served on two listeners is
// two route configurations. Own listeners are few and small: no route
// scopes and no VHDS there; clusters, load assignments and secrets are
// the IR's, rendered once by this renderer. It returns the filters the
// listeners use and whether any serves TLS (so needs the secrets).
func (c *Renderer) renderOwn(res *Resources, m *ir.IR) (filterSet, bool, error) {
	if len(m.OwnListeners) == 0 && len(c.own) == 0 {
		return 0, false, nil
	}
	next := make(map[string]*Renderer, len(m.OwnListeners))
	var used filterSet
	var tls bool
	for _, o := range m.OwnListeners {
		l := o.Listener
		sub := c.own[l.Name]
		if sub == nil {
			opts := c.opts
			opts.VirtualHostDiscovery, opts.DeltaVirtualHostDiscovery, opts.RouteScopes, opts.AutoRouteScopes = false, false, 0, false
			sub = NewRendererWith(opts)
			sub.httpsRoutePrefix = l.Name + "/"
		}
		next[l.Name] = sub
		uses, chains, err := sub.renderOwnListener(res, o, m)
		if err != nil {
			return 0, false, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		used |= uses
		tls = tls || chains
	}
	c.own = next
	return used, tls, nil
}

// renderOwnListener renders one own listener, by its own renderer.
func (c *Renderer) renderOwnListener(res *Resources, o *ir.OwnListener, m *ir.IR) (filterSet, bool, error) {
	l := o.Listener
	part := &ir.IR{Listeners: []*ir.Listener{l}, VirtualHosts: o.VirtualHosts, Certificates: m.Certificates}
	c.next = generation{chains: map[string]*chainEntry{}, secrets: map[string]*secretEntry{}}
	var used filterSet
	switch l.Protocol {
	case ir.HTTP:
		rc, uses, gz, err := c.httpRouteConfiguration(l, o.VirtualHosts)
		if err != nil {
			return 0, false, err
		}
		uses |= c.onDemandUse() // ondemand.go
		lis, err := c.listener(l, uses, gz)
		if err != nil {
			return 0, false, err
		}
		res.Listeners = append(res.Listeners, lis)
		res.Routes = append(res.Routes, rc)
		used = uses
	case ir.HTTPS:
		if err := c.addHTTPS(res, l, part); err != nil {
			return 0, false, err
		}
	default:
		return 0, false, fmt.Errorf("unknown protocol %q", l.Protocol)
	}
	for _, ch := range c.next.chains {
		used |= ch.uses
	}
	chains := len(c.next.chains) > 0
	c.chains, c.secrets = c.next.chains, c.next.secrets
	c.next = generation{}
	c.prune(part)
	return used, chains, nil
}

package ingress

import "github.com/ingress-xds/ingress-xds/translate/ir"

// groups are the results of the groups' parsers (groups.go): the merge's
// input.
type groups struct {
	proxy       proxyConfig
	upstream    upstreamConfig
	passthrough bool              // ssl-passthrough, honoured
	clientCert  *clientCertIntent // auth-tls; nil: none
	sslCiphers  string            // ssl-ciphers; empty: the ConfigMap's
}

// merged is what the groups amount to beyond the route policy: the
// Ingress's cluster policy and what its fragment carries to its hosts.
type merged struct {
	// cluster is the policy of every cluster the routes send to; nil:
	// the default.
	cluster *ir.ClusterPolicy
	// autoTLS, with AUTO_HTTP, is the TLS of the clusters that take the
	// requests that arrived over TLS (upstreamIntent).
	autoTLS         *ir.UpstreamTLS
	serviceUpstream bool
	denied          string // why the routes answer 503; empty: they do not
	passthrough     bool
	clientCert      *clientCertIntent
	sslCiphers      string
}

// mergeGroups applies the groups' results: to p, the route policy every
// route of the Ingress shares (which the groups not yet parsed apart have
// already written: none of them writes the fields set here), and to the
// cluster policy and the fragment's host settings, which it returns. The
// rules of what overrides what are all here:
//
//   - route policy: proxy's timeouts, retries (ingress-nginx's default
//     when proxy sets none: parseProxy) and body bound; upstream's Host
//     (upstream-vhost: the Host of p's rewrite, whatever else the rewrite
//     holds) and hash;
//   - cluster policy: each field has one source, so no group's setting
//     can drop another's: the connect timeout is proxy's; the protocol,
//     the load balancer (upstream-hash-by over load-balance, settled in
//     parseUpstream) and the TLS backend-protocol asks are upstream's;
//   - TLS, where two groups meet: with AUTO_HTTP, upstream's TLS is only
//     for the requests that came over TLS (autoTLS), the plain ones
//     going plain; ssl-passthrough makes every request's cluster speak
//     TLS, as its backend does: AUTO_HTTP's TLS then for every request
//     (nginx writes https:// for a passed-through backend whatever the
//     scheme), else upstream's TLS, else TLS without settings;
//   - a policy that asks nothing is nil (the backend's default cluster).
func mergeGroups(g *groups, p *ir.RoutePolicy) merged {
	p.Timeouts = g.proxy.timeouts
	p.Retries = g.proxy.retries
	p.RequestBody = g.proxy.requestBody
	if g.upstream.vhost != "" {
		rw := ir.Rewrite{}
		if p.Rewrite != nil {
			rw = *p.Rewrite
		}
		rw.Host = g.upstream.vhost
		p.Rewrite = &rw
	}
	p.Hash = g.upstream.hash

	m := merged{
		serviceUpstream: g.upstream.serviceUpstream,
		denied:          g.upstream.denied,
		passthrough:     g.passthrough,
		clientCert:      g.clientCert,
		sslCiphers:      g.sslCiphers,
	}
	cp := ir.ClusterPolicy{
		ConnectTimeout: g.proxy.connectTimeout,
		Protocol:       g.upstream.protocol,
		LoadBalancer:   g.upstream.loadBalancer,
		TLS:            g.upstream.tls,
	}
	if g.upstream.auto {
		m.autoTLS, cp.TLS = cp.TLS, nil
	}
	if g.passthrough {
		switch {
		case m.autoTLS != nil:
			cp.TLS, m.autoTLS = m.autoTLS, nil
		case cp.TLS == nil:
			cp.TLS = &ir.UpstreamTLS{}
		}
	}
	if !cp.IsDefault() {
		m.cluster = &cp
	}
	return m
}

// apply gives the fragment being built what the merge made of the groups.
func (f *fragmentBuilder) apply(m merged) {
	f.clusterPolicy = m.cluster
	f.upstream.autoTLS = m.autoTLS
	f.upstream.serviceUpstream = m.serviceUpstream
	if m.denied != "" {
		f.upstream.denied = m.denied
	}
	f.frag.passthrough = m.passthrough
	f.frag.clientCert = m.clientCert
	f.frag.sslCiphers = m.sslCiphers
}

package ingress

import (
	"reflect"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// groups are the results of the groups' parsers (groups.go): the merge's
// input. Each field is one group's.
type groups struct {
	// The groups that shape the routes.
	rewrite  rewriteIntent
	aliases  []string
	canary   *canaryIntent
	affinity *affinityIntent
	fallback *fallbackIntent
	// The groups of the policies.
	redirect        redirectConfig
	proxy           proxyConfig
	cors            *ir.CORS
	customHeaders   customHeadersConfig
	connection      string // connection-proxy-header; empty: none
	access          accessConfig
	connections     *ir.ConnectionLimit
	responseRate    *ir.ResponseRate
	basicAuth       basicAuthConfig
	externalAuth    *ir.ExternalAuth
	satisfyAny      bool
	responseRewrite *ir.ResponseRewrite
	mirror          mirrorConfig
	upstream        upstreamConfig
	passthrough     bool              // ssl-passthrough, honoured
	clientCert      *clientCertIntent // auth-tls; nil: none
	sslCiphers      string            // ssl-ciphers; empty: the ConfigMap's
	snippets        snippetsConfig    // snippets.go
	noAccessLog     bool              // enable-access-log: false
	tracing         *ir.RouteTracing  // enable-opentelemetry; nil: not traced
}

// merged is what the groups amount to beyond the route policy: the
// Ingress's cluster policy and what its fragment carries to its routes and
// hosts.
type merged struct {
	rewrite  rewriteIntent
	aliases  []string
	canary   *canaryIntent
	affinity *affinityIntent
	fallback *fallbackIntent
	// cluster is the policy of every cluster the routes send to; nil:
	// the default.
	cluster *ir.ClusterPolicy
	// autoTLS, with AUTO_HTTP, is the TLS of the clusters that take the
	// requests that arrived over TLS (upstreamIntent).
	autoTLS         *ir.UpstreamTLS
	serviceUpstream bool
	denied          string // why the routes answer 503; empty: they do not
	redirects       redirectIntent
	mirror          *clusterRef
	passthrough     bool
	clientCert      *clientCertIntent
	sslCiphers      string
	snippets        snippetsConfig
	customHeaders   []ir.Header
	// problems are the merge's own: groups that do not go together.
	problems []problem
}

// mergeGroups applies the groups' results to the route policy every route
// of the Ingress shares, the cluster policy of the clusters they send to,
// and what the fragment carries to its routes and hosts. What overrides
// what is all here:
//
//   - route policy: each field has one group, but for these rules:
//     a redirect of every path (permanent-redirect, temporal-redirect)
//     answers before the redirect to HTTPS, which is then left out
//     (nginx's return comes first); basic and external authentication
//     are one check of two kinds; satisfy any, with two checks or more
//     among the address (allow and deny lists) and the two kinds, moves
//     the address check into the authentication, which then passes a
//     request that one of them lets in (satisfyAny);
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
//   - a cluster policy that asks nothing is nil (the backend's default
//     cluster);
//   - a configuration-snippet's limit_req rates join the limit-rps and
//     limit-rpm annotations' in one rate limit (withSnippetRates), as
//     nginx applies every limit_req of the location;
//   - a configuration-snippet whose error_page takes a status the
//     location answers itself, or that reads auth-url's answer where that
//     is not translated, is dropped, refusing the Ingress
//     (checkLocationSnippet);
//   - the routes answer 503 when any group denies them (custom-headers,
//     basic authentication, upstream), the first one's reason kept;
//   - affinity without session-cookie-path under use-regex is reported,
//     as ingress-nginx warns (each cookie's Path is its path as written);
//   - the groups that shape the routes (rewrite, aliases, canary,
//     affinity, fallback) pass through: the fragment applies them to its
//     routes (a canary's affinity follows its mainline's: applyAffinity).
func mergeGroups(g *groups) (ir.RoutePolicy, merged) {
	// First, as it may drop the configuration-snippet.
	snippetProblems := checkLocationSnippet(g) // snippets.go
	var p ir.RoutePolicy
	if g.redirect.intent.every == nil {
		p.HTTPSRedirect = g.redirect.https
	}
	p.Timeouts, p.Retries, p.RequestBody = g.proxy.timeouts, g.proxy.retries, g.proxy.requestBody
	p.CORS = g.cors
	if len(g.customHeaders.set) > 0 {
		p.ResponseHeaders = &ir.HeaderChanges{Set: g.customHeaders.set}
	}
	// The template's proxy_set_header list: the ConfigMap's
	// proxy-set-headers, then connection-proxy-header's.
	p.RequestHeaders = g.snippets.proxyHeaders
	if g.connection != "" {
		connection := &ir.HeaderChanges{Set: []ir.Header{{Name: "Connection", Value: g.connection}}}
		if p.RequestHeaders == nil {
			p.RequestHeaders = connection
		} else {
			p.RequestHeaders = mergeHeaderChanges(p.RequestHeaders, connection)
		}
	}
	p.IPRules, p.RateLimit = g.access.ipRules, withSnippetRates(g.access.rateLimit, g.snippets) // snippets.go
	p.Connections = g.connections
	p.ResponseRate = g.responseRate
	g.externalAuth = mergeAuthSnippet(g.externalAuth, g.snippets.auth) // snippets.go
	var authless *ir.HeaderChanges
	g.externalAuth, authless = mergeAuthHeaders(g.externalAuth, g.snippets.location)
	if g.basicAuth.basic != nil || g.externalAuth != nil {
		p.Auth = &ir.Auth{Basic: g.basicAuth.basic, External: g.externalAuth}
	}
	mergeSnippetAccess(&p, g.snippets.location) // snippets.go
	if g.satisfyAny || g.snippets.location != nil && g.snippets.location.Satisfy == "any" {
		satisfyAny(&p)
	}
	p.ResponseRewrite = g.responseRewrite
	if g.mirror.cluster != nil {
		p.Mirrors = []ir.Mirror{g.mirror.mirror}
	}
	if g.upstream.vhost != "" {
		p.Rewrite = &ir.Rewrite{Host: g.upstream.vhost}
	}
	p.Hash = g.upstream.hash
	// After custom-headers and the allow and deny lists: the snippet's
	// headers come first, its rules after the annotations' (snippets.go).
	mergeSnippetPolicy(&p, g.snippets.location)
	if authless != nil {
		p.RequestHeaders = mergeHeaderChanges(authless, p.RequestHeaders)
	}
	p.NoAccessLog = g.noAccessLog
	p.Tracing = g.tracing
	p.Compression = locationCompression(g.snippets) // gzip.go

	m := merged{
		rewrite:         g.rewrite,
		aliases:         g.aliases,
		canary:          g.canary,
		affinity:        g.affinity,
		fallback:        g.fallback,
		serviceUpstream: g.upstream.serviceUpstream,
		redirects:       g.redirect.intent,
		mirror:          g.mirror.cluster,
		passthrough:     g.passthrough,
		clientCert:      g.clientCert,
		sslCiphers:      g.sslCiphers,
		snippets:        g.snippets,
		customHeaders:   g.customHeaders.set,
	}
	m.problems = append(m.problems, snippetProblems...)
	if g.affinity != nil && !g.affinity.pathSet && g.rewrite.useRegex {
		m.problems = append(m.problems, problemf("AffinityPathNotSet", "annotation %s should be set when use-regex is true (as ingress-nginx warns): the cookie's Path is each path as written",
			annotations.SessionCookiePath.Name()))
	}
	for _, denied := range []string{g.customHeaders.denied, g.basicAuth.denied, g.upstream.denied} {
		if denied != "" {
			m.denied = denied
			break
		}
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
	return p, m
}

// apply gives the fragment being built what the merge made of the groups.
func (f *fragmentBuilder) apply(p ir.RoutePolicy, m merged) {
	if !reflect.ValueOf(p).IsZero() {
		f.policy = &p
	}
	f.rewrite = m.rewrite
	f.frag.aliases = m.aliases
	f.frag.canary = m.canary
	f.affinity = m.affinity
	f.fallback = m.fallback
	f.clusterPolicy = m.cluster
	f.upstream.autoTLS = m.autoTLS
	f.upstream.serviceUpstream = m.serviceUpstream
	f.upstream.denied = m.denied
	f.redirects = m.redirects
	f.mirror = m.mirror
	f.frag.passthrough = m.passthrough
	f.frag.clientCert = m.clientCert
	f.frag.sslCiphers = m.sslCiphers
	f.snippets, f.customHeaders = m.snippets.location, m.customHeaders
	f.frag.serverSnippet = m.snippets.server
	f.frag.locationGzip = locationGzip(m.snippets.location) // gzip.go
	f.report(m.problems)
}

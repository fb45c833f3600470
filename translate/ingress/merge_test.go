package ingress

import (
	"reflect"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestMergeGroups holds the merge to its rules (merge.go): every group's
// share of the cluster policy kept beside the others', AUTO_HTTP's TLS set
// apart, ssl-passthrough's TLS over both, and the route policy's rules
// where two groups meet.
func TestMergeGroups(t *testing.T) {
	fiveSeconds := ir.Duration(5 * time.Second)
	verified := &ir.UpstreamTLS{SNI: "backend.internal", CA: ir.PEM("ca"), MinVersion: "TLSv1.2", MaxVersion: "TLSv1.2"}
	retries := &ir.Retries{Attempts: 2, On: []string{"connect-failure"}}
	basic := &ir.BasicAuth{Realm: "r", Users: "u:h\n"}
	external := &ir.ExternalAuth{URL: "http://auth/"}
	ipRules := &ir.IPRules{Allow: []string{"10.0.0.0/8"}}
	https := &ir.HTTPSRedirect{Code: 308}
	for _, tc := range []struct {
		name    string
		g       groups
		cluster *ir.ClusterPolicy
		autoTLS *ir.UpstreamTLS
		policy  ir.RoutePolicy
	}{
		{name: "nothing asked: the default cluster, no policy"},
		{name: "the connect timeout alone",
			g:       groups{proxy: proxyConfig{connectTimeout: fiveSeconds}},
			cluster: &ir.ClusterPolicy{ConnectTimeout: fiveSeconds}},
		{
			// Once proxy.go replaced the cluster policy wholesale and
			// had to run before upstream and passthrough: each now
			// fills its own fields of the one policy.
			name: "connect timeout, upstream TLS and passthrough in one policy",
			g: groups{proxy: proxyConfig{connectTimeout: fiveSeconds},
				upstream: upstreamConfig{tls: verified, loadBalancer: ir.LeastRequest}, passthrough: true},
			cluster: &ir.ClusterPolicy{ConnectTimeout: fiveSeconds, TLS: verified, LoadBalancer: ir.LeastRequest},
		},
		{name: "passthrough alone: TLS without settings",
			g:       groups{passthrough: true},
			cluster: &ir.ClusterPolicy{TLS: &ir.UpstreamTLS{}}},
		{name: "AUTO_HTTP: plain requests plain, TLS set apart",
			g:       groups{proxy: proxyConfig{connectTimeout: fiveSeconds}, upstream: upstreamConfig{tls: verified, auto: true}},
			cluster: &ir.ClusterPolicy{ConnectTimeout: fiveSeconds}, autoTLS: verified},
		{name: "AUTO_HTTP alone: the plain cluster is the default",
			g:       groups{upstream: upstreamConfig{tls: &ir.UpstreamTLS{}, auto: true}},
			autoTLS: &ir.UpstreamTLS{}},
		{name: "AUTO_HTTP passed through: its TLS for every request",
			g:       groups{upstream: upstreamConfig{tls: verified, auto: true}, passthrough: true},
			cluster: &ir.ClusterPolicy{TLS: verified}},
		{name: "GRPCS with a hash",
			g: groups{upstream: upstreamConfig{protocol: ir.UpstreamHTTP2, tls: verified, loadBalancer: ir.RingHash,
				hash: []ir.HashPart{{Kind: ir.HashHeader, Name: "x-user"}}}},
			cluster: &ir.ClusterPolicy{Protocol: ir.UpstreamHTTP2, TLS: verified, LoadBalancer: ir.RingHash},
			policy:  ir.RoutePolicy{Hash: []ir.HashPart{{Kind: ir.HashHeader, Name: "x-user"}}}},
		{name: "each group's route fields beside the others'",
			g: groups{proxy: proxyConfig{timeouts: &ir.Timeouts{Idle: fiveSeconds}, retries: retries, requestBody: &ir.RequestBody{MaxBytes: 8}},
				cors: &ir.CORS{AnyOrigin: true}, connection: "close", customHeaders: customHeadersConfig{set: []ir.Header{{Name: "X-A", Value: "1"}}},
				upstream: upstreamConfig{vhost: "internal.example"}, redirect: redirectConfig{https: https}},
			policy: ir.RoutePolicy{CORS: &ir.CORS{AnyOrigin: true}, Rewrite: &ir.Rewrite{Host: "internal.example"}, HTTPSRedirect: https,
				RequestHeaders:  &ir.HeaderChanges{Set: []ir.Header{{Name: "Connection", Value: "close"}}},
				ResponseHeaders: &ir.HeaderChanges{Set: []ir.Header{{Name: "X-A", Value: "1"}}},
				Timeouts:        &ir.Timeouts{Idle: fiveSeconds}, Retries: retries, RequestBody: &ir.RequestBody{MaxBytes: 8}}},
		{name: "a redirect of every path answers before the redirect to HTTPS",
			g: groups{redirect: redirectConfig{intent: redirectIntent{every: &ir.Redirect{Location: "http://x/", Code: 301}}, https: https}}},
		{name: "basic and external authentication: one check of two kinds",
			g:      groups{basicAuth: basicAuthConfig{basic: basic}, externalAuth: external, access: accessConfig{ipRules: ipRules}},
			policy: ir.RoutePolicy{Auth: &ir.Auth{Basic: basic, External: external}, IPRules: ipRules}},
		{name: "satisfy any: the address check joins the authentication",
			g:      groups{basicAuth: basicAuthConfig{basic: basic}, access: accessConfig{ipRules: ipRules}, satisfyAny: true},
			policy: ir.RoutePolicy{Auth: &ir.Auth{Basic: basic, Any: true, Address: ipRules}}},
		{name: "satisfy any with one check: nothing to choose between",
			g:      groups{access: accessConfig{ipRules: ipRules}, satisfyAny: true},
			policy: ir.RoutePolicy{IPRules: ipRules}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, m := mergeGroups(&tc.g)
			if !reflect.DeepEqual(m.cluster, tc.cluster) {
				t.Errorf("cluster policy %+v, want %+v", m.cluster, tc.cluster)
			}
			if !reflect.DeepEqual(m.autoTLS, tc.autoTLS) {
				t.Errorf("AUTO_HTTP's TLS %+v, want %+v", m.autoTLS, tc.autoTLS)
			}
			if !reflect.DeepEqual(p, tc.policy) {
				t.Errorf("route policy %+v, want %+v", p, tc.policy)
			}
		})
	}
}

// TestMergeGroupsCarriesTheRest: what the fragment carries to its routes
// and hosts passes through the merge, and the first group to deny the
// routes gives the reason.
func TestMergeGroupsCarriesTheRest(t *testing.T) {
	cc := &clientCertIntent{policy: &ir.ClientCert{Verify: ir.VerifyOn, Depth: 1}}
	mirror := &clusterRef{name: "mirror/http/m/80"}
	g := groups{upstream: upstreamConfig{serviceUpstream: true, denied: "backend protocol FCGI is not supported"},
		basicAuth:   basicAuthConfig{denied: "basic authentication without users"},
		redirect:    redirectConfig{intent: redirectIntent{appRoot: "/app"}},
		mirror:      mirrorConfig{mirror: ir.Mirror{Cluster: mirror.name, Percent: 100}, cluster: mirror},
		passthrough: true, clientCert: cc, sslCiphers: "AES256-SHA"}
	p, m := mergeGroups(&g)
	if !m.serviceUpstream || m.denied != "basic authentication without users" || !m.passthrough || m.clientCert != cc ||
		m.sslCiphers != "AES256-SHA" || m.mirror != mirror || m.redirects.appRoot != "/app" {
		t.Errorf("merged %+v", m)
	}
	if len(p.Mirrors) != 1 || p.Mirrors[0].Cluster != mirror.name {
		t.Errorf("mirrors %+v", p.Mirrors)
	}
}

// TestMergeGroupsAffinityUnderRegex: affinity without session-cookie-path
// in regex mode is reported, as ingress-nginx warns; with the path, or
// without regex mode, it is not.
func TestMergeGroupsAffinityUnderRegex(t *testing.T) {
	for _, tc := range []struct {
		g    groups
		want int
	}{
		{groups{affinity: &affinityIntent{}, rewrite: rewriteIntent{useRegex: true}}, 1},
		{groups{affinity: &affinityIntent{pathSet: true}, rewrite: rewriteIntent{useRegex: true}}, 0},
		{groups{affinity: &affinityIntent{}}, 0},
		{groups{rewrite: rewriteIntent{useRegex: true}}, 0},
	} {
		_, m := mergeGroups(&tc.g)
		if len(m.problems) != tc.want || tc.want > 0 && m.problems[0].reason != "AffinityPathNotSet" {
			t.Errorf("%+v: problems %+v, want %d", tc.g, m.problems, tc.want)
		}
	}
}

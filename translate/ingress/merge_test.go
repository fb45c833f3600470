package ingress

import (
	"reflect"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestMergeGroups holds the merge to its rules (merge.go): every group's
// share of the cluster policy kept beside the others', AUTO_HTTP's TLS set
// apart, ssl-passthrough's TLS over both, and the route policy's fields
// from proxy and upstream kept beside what the other groups wrote.
func TestMergeGroups(t *testing.T) {
	fiveSeconds := ir.Duration(5 * time.Second)
	verified := &ir.UpstreamTLS{SNI: "backend.internal", CA: ir.PEM("ca"), MinVersion: "TLSv1.2", MaxVersion: "TLSv1.2"}
	retries := &ir.Retries{Attempts: 2, On: []string{"connect-failure"}}
	for _, tc := range []struct {
		name    string
		g       groups
		before  ir.RoutePolicy // what the other groups wrote
		cluster *ir.ClusterPolicy
		autoTLS *ir.UpstreamTLS
		policy  ir.RoutePolicy
	}{
		{name: "nothing asked: the default cluster"},
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
		{name: "route fields beside the other groups'",
			g: groups{proxy: proxyConfig{timeouts: &ir.Timeouts{Idle: fiveSeconds}, retries: retries, requestBody: &ir.RequestBody{MaxBytes: 8}},
				upstream: upstreamConfig{vhost: "internal.example"}},
			before: ir.RoutePolicy{CORS: &ir.CORS{}, Rewrite: &ir.Rewrite{Prefix: "/"}},
			policy: ir.RoutePolicy{CORS: &ir.CORS{}, Rewrite: &ir.Rewrite{Prefix: "/", Host: "internal.example"},
				Timeouts: &ir.Timeouts{Idle: fiveSeconds}, Retries: retries, RequestBody: &ir.RequestBody{MaxBytes: 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.before
			if tc.before.Rewrite != nil {
				rw := *tc.before.Rewrite
				p.Rewrite = &rw
			}
			m := mergeGroups(&tc.g, &p)
			if !reflect.DeepEqual(m.cluster, tc.cluster) {
				t.Errorf("cluster policy %+v, want %+v", m.cluster, tc.cluster)
			}
			if !reflect.DeepEqual(m.autoTLS, tc.autoTLS) {
				t.Errorf("AUTO_HTTP's TLS %+v, want %+v", m.autoTLS, tc.autoTLS)
			}
			if !reflect.DeepEqual(p, tc.policy) {
				t.Errorf("route policy %+v, want %+v", p, tc.policy)
			}
			if tc.before.Rewrite != nil && tc.before.Rewrite.Host != "" {
				t.Errorf("the other groups' rewrite was changed in place")
			}
		})
	}
}

// TestMergeGroupsCarriesHostSettings: what the fragment carries to its
// hosts, and the backends' settings, pass through the merge unchanged.
func TestMergeGroupsCarriesHostSettings(t *testing.T) {
	cc := &clientCertIntent{policy: &ir.ClientCert{Verify: ir.VerifyOn, Depth: 1}}
	g := groups{upstream: upstreamConfig{serviceUpstream: true, denied: "backend protocol FCGI is not supported"},
		passthrough: true, clientCert: cc, sslCiphers: "AES256-SHA"}
	var p ir.RoutePolicy
	m := mergeGroups(&g, &p)
	if !m.serviceUpstream || m.denied == "" || !m.passthrough || m.clientCert != cc || m.sslCiphers != "AES256-SHA" {
		t.Errorf("merged %+v", m)
	}
}

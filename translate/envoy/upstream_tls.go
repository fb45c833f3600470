package envoy

import (
	"fmt"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// upstreamTLS is the transport socket of a cluster that speaks TLS to its
// endpoints. The CA and the client certificate are inline: they belong to
// this one cluster, whose name already changes with them (it hashes the
// policy), so a rotated Secret is a new cluster either way, and an inline
// cluster is complete the moment Envoy has it (no SDS to wait for, nothing
// to warm before verification is in force).
func upstreamTLS(t *ir.UpstreamTLS, protocol ir.UpstreamProtocol) (*corev3.TransportSocket, error) {
	common := &tlsv3.CommonTlsContext{}
	if protocol == ir.UpstreamHTTP2 {
		common.AlpnProtocols = []string{"h2"}
	}
	if t.MinVersion != "" || t.MaxVersion != "" || len(t.Ciphers) > 0 {
		common.TlsParams = &tlsv3.TlsParameters{
			TlsMinimumProtocolVersion: tlsVersion(t.MinVersion),
			TlsMaximumProtocolVersion: tlsVersion(t.MaxVersion),
			CipherSuites:              t.Ciphers,
		}
	}
	if len(t.ClientChain) > 0 {
		common.TlsCertificates = []*tlsv3.TlsCertificate{{
			CertificateChain: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: t.ClientChain}},
			PrivateKey:       &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: t.ClientKey}},
		}}
	}
	if len(t.CA) > 0 {
		v := &tlsv3.CertificateValidationContext{
			TrustedCa: &corev3.DataSource{Specifier: &corev3.DataSource_InlineBytes{InlineBytes: t.CA}},
		}
		if t.VerifyDepth > 0 {
			v.MaxVerifyDepth = wrapperspb.UInt32(t.VerifyDepth)
		}
		san := func(t tlsv3.SubjectAltNameMatcher_SanType, name string) *tlsv3.SubjectAltNameMatcher {
			return &tlsv3.SubjectAltNameMatcher{SanType: t, Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: name}}}
		}
		if t.VerifyName != "" {
			v.MatchTypedSubjectAltNames = []*tlsv3.SubjectAltNameMatcher{san(tlsv3.SubjectAltNameMatcher_DNS, t.VerifyName)}
		}
		// Any one of them matches (Envoy's rule for a list, Gateway
		// API's for subjectAltNames).
		for _, n := range t.SubjectAltNames {
			if n.DNS != "" {
				v.MatchTypedSubjectAltNames = append(v.MatchTypedSubjectAltNames, san(tlsv3.SubjectAltNameMatcher_DNS, n.DNS))
			} else {
				v.MatchTypedSubjectAltNames = append(v.MatchTypedSubjectAltNames, san(tlsv3.SubjectAltNameMatcher_URI, n.URI))
			}
		}
		common.ValidationContextType = &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: v}
	}
	packed, err := anypb.New(&tlsv3.UpstreamTlsContext{Sni: t.SNI, CommonTlsContext: common})
	if err != nil {
		return nil, fmt.Errorf("packing upstream tls: %w", err)
	}
	return &corev3.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: packed}}, nil
}

func tlsVersion(v string) tlsv3.TlsParameters_TlsProtocol {
	switch v {
	case "TLSv1.2":
		return tlsv3.TlsParameters_TLSv1_2
	case "TLSv1.3":
		return tlsv3.TlsParameters_TLSv1_3
	}
	return tlsv3.TlsParameters_TLS_AUTO
}

// RedactCluster returns a cluster safe to show: a copy with the private
// key of its client certificate (proxy-ssl-secret's tls.key, written into
// the cluster) replaced, as RedactSecrets does for Secrets. Any other
// cluster is returned as it is.
func RedactCluster(m proto.Message) proto.Message {
	c, ok := m.(*clusterv3.Cluster)
	if !ok || c.GetTransportSocket().GetTypedConfig() == nil {
		return m
	}
	ctx := &tlsv3.UpstreamTlsContext{}
	if err := c.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil || len(ctx.GetCommonTlsContext().GetTlsCertificates()) == 0 {
		return m
	}
	for _, tc := range ctx.CommonTlsContext.TlsCertificates {
		tc.PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: Redacted}}
	}
	packed, err := anypb.New(ctx)
	if err != nil {
		// The context just decoded encodes again; if not, show nothing
		// of it rather than the key.
		packed = nil
	}
	out := proto.Clone(c).(*clusterv3.Cluster)
	out.TransportSocket = &corev3.TransportSocket{Name: out.TransportSocket.Name, ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: packed}}
	return out
}

// redactClusters is RedactCluster over a list.
func redactClusters(cs []Cluster) []Cluster {
	out := make([]Cluster, len(cs))
	for i, c := range cs {
		out[i] = RedactCluster(c).(Cluster)
	}
	return out
}

package xds

import (
	"errors"
	"net/netip"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// withMutualTLS makes the xDS cluster speak TLS: Envoy presents the client
// certificate of files, trusts only files.CA for the server's, and accepts
// it only for serverName (a DNS name, also sent as SNI, or an IP address).
// The files are paths on Envoy's filesystem, read by Envoy when it starts:
// the bootstrap never holds a key.
func withMutualTLS(c *clusterv3.Cluster, files TLSFiles, serverName string) error {
	if files.Cert == "" || files.Key == "" || files.CA == "" {
		return errors.New("xDS over TLS needs a client certificate, its key and the server's CA")
	}
	if serverName == "" {
		return errors.New("xDS over TLS needs the server name to verify")
	}
	san := &tlsv3.SubjectAltNameMatcher{
		SanType: tlsv3.SubjectAltNameMatcher_DNS,
		Matcher: &matcherv3.StringMatcher{MatchPattern: &matcherv3.StringMatcher_Exact{Exact: serverName}},
	}
	sni := serverName
	if _, err := netip.ParseAddr(serverName); err == nil {
		// SNI carries host names only; an address is checked against the
		// certificate's IP SANs.
		san.SanType, sni = tlsv3.SubjectAltNameMatcher_IP_ADDRESS, ""
	}
	file := func(path string) *corev3.DataSource {
		return &corev3.DataSource{Specifier: &corev3.DataSource_Filename{Filename: path}}
	}
	tlsContext, err := anypb.New(&tlsv3.UpstreamTlsContext{
		Sni: sni,
		CommonTlsContext: &tlsv3.CommonTlsContext{
			// gRPC servers require HTTP/2 to be negotiated over TLS.
			AlpnProtocols: []string{"h2"},
			TlsParams:     &tlsv3.TlsParameters{TlsMinimumProtocolVersion: tlsv3.TlsParameters_TLSv1_2},
			TlsCertificates: []*tlsv3.TlsCertificate{{
				CertificateChain: file(files.Cert),
				PrivateKey:       file(files.Key),
			}},
			ValidationContextType: &tlsv3.CommonTlsContext_ValidationContext{ValidationContext: &tlsv3.CertificateValidationContext{
				TrustedCa:                 file(files.CA),
				MatchTypedSubjectAltNames: []*tlsv3.SubjectAltNameMatcher{san},
			}},
		},
	})
	if err != nil {
		return err
	}
	c.TransportSocket = &corev3.TransportSocket{
		Name:       "envoy.transport_sockets.tls",
		ConfigType: &corev3.TransportSocket_TypedConfig{TypedConfig: tlsContext},
	}
	return nil
}

package xds

import (
	"testing"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
)

// The xDS cluster of a TLS bootstrap presents the client files, trusts the
// CA file, negotiates HTTP/2, and checks the server by DNS name (sent as
// SNI) or by IP address (no SNI); without TLS it stays plaintext.
func TestBootstrapMutualTLS(t *testing.T) {
	files := &TLSFiles{Cert: "/etc/envoy/xds-tls/tls.crt", Key: "/etc/envoy/xds-tls/tls.key", CA: "/etc/envoy/xds-tls/ca.crt"}
	for _, c := range []struct {
		address, serverName string
		wantSNI             string
		wantSAN             tlsv3.SubjectAltNameMatcher_SanType
		wantName            string
	}{
		{"ingress-xds.ingress-xds.svc:18000", "", "ingress-xds.ingress-xds.svc", tlsv3.SubjectAltNameMatcher_DNS, "ingress-xds.ingress-xds.svc"},
		{"127.0.0.1:18000", "", "", tlsv3.SubjectAltNameMatcher_IP_ADDRESS, "127.0.0.1"},
		{"10.0.0.1:18000", "xds.example.com", "xds.example.com", tlsv3.SubjectAltNameMatcher_DNS, "xds.example.com"},
	} {
		b, err := Bootstrap(BootstrapOptions{XDSAddress: c.address, NodeID: "n", AdminAddress: "127.0.0.1:9901", TLS: files, ServerName: c.serverName})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.ValidateAll(); err != nil {
			t.Fatalf("%s: invalid bootstrap: %v", c.address, err)
		}
		socket := b.GetStaticResources().GetClusters()[0].GetTransportSocket()
		var ctx tlsv3.UpstreamTlsContext
		if err := socket.GetTypedConfig().UnmarshalTo(&ctx); err != nil {
			t.Fatalf("%s: transport socket %v: %v", c.address, socket, err)
		}
		common := ctx.GetCommonTlsContext()
		cert := common.GetTlsCertificates()[0]
		validation := common.GetValidationContext()
		san := validation.GetMatchTypedSubjectAltNames()
		if ctx.GetSni() != c.wantSNI || len(san) != 1 || san[0].GetSanType() != c.wantSAN || san[0].GetMatcher().GetExact() != c.wantName {
			t.Errorf("%s: SNI %q, SAN matchers %v; want SNI %q and %v %q", c.address, ctx.GetSni(), san, c.wantSNI, c.wantSAN, c.wantName)
		}
		if cert.GetCertificateChain().GetFilename() != files.Cert || cert.GetPrivateKey().GetFilename() != files.Key ||
			validation.GetTrustedCa().GetFilename() != files.CA {
			t.Errorf("%s: the TLS context does not name the files: %v", c.address, common)
		}
		if alpn := common.GetAlpnProtocols(); len(alpn) != 1 || alpn[0] != "h2" {
			t.Errorf("%s: ALPN %v, want h2 (gRPC servers require it)", c.address, alpn)
		}
	}
	b, err := Bootstrap(BootstrapOptions{XDSAddress: "127.0.0.1:18000", NodeID: "n", AdminAddress: "127.0.0.1:9901"})
	if err != nil {
		t.Fatal(err)
	}
	if s := b.GetStaticResources().GetClusters()[0].GetTransportSocket(); s != nil {
		t.Errorf("a bootstrap without TLS has a transport socket: %v", s)
	}
	if _, err := Bootstrap(BootstrapOptions{XDSAddress: "127.0.0.1:18000", NodeID: "n", AdminAddress: "127.0.0.1:9901", TLS: &TLSFiles{Cert: "c"}}); err == nil {
		t.Error("a TLS bootstrap without key and CA accepted")
	}
}

package xds

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	"github.com/ingress-xds/ingress-xds/translate"
)

// redactSecret returns a copy of a secret safe to show: translate's redaction
// of private keys and session ticket keys, and beyond it every other kind
// of key material a Secret can carry, so that a translator that one day
// emits them leaks nothing through inspection either.
func redactSecret(s *tlsv3.Secret) *tlsv3.Secret {
	c := translate.RedactSecrets([]*tlsv3.Secret{s})[0]
	redacted := &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: translate.Redacted}}
	switch t := c.GetType().(type) {
	case *tlsv3.Secret_TlsCertificate:
		if t.TlsCertificate.GetPassword() != nil {
			t.TlsCertificate.Password = redacted
		}
		if t.TlsCertificate.GetPrivateKeyProvider() != nil {
			t.TlsCertificate.PrivateKeyProvider = nil
		}
		if t.TlsCertificate.GetPkcs12() != nil {
			t.TlsCertificate.Pkcs12 = redacted
		}
	case *tlsv3.Secret_GenericSecret:
		t.GenericSecret.Secret = redacted
		for k := range t.GenericSecret.GetSecrets() {
			t.GenericSecret.Secrets[k] = redacted
		}
	}
	return c
}

// redactCluster returns a cluster safe to show: translate's redaction of a
// client certificate's key written into it.
func redactCluster(c types.Resource) types.Resource { return translate.RedactCluster(c) }

// redactRoute returns a route configuration safe to show: translate's
// redaction of basic authentication's password hashes.
func redactRoute(r types.Resource) types.Resource { return translate.RedactRoute(r) }

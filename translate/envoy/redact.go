package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
)

// Redacted replaces private key material wherever config is shown to people.
const Redacted = "[redacted]"

// RedactSecrets returns copies of the secrets with private keys and
// session ticket keys replaced, so that they can be printed or served for
// inspection.
func RedactSecrets(secrets []*tlsv3.Secret) []*tlsv3.Secret {
	out := make([]*tlsv3.Secret, 0, len(secrets))
	for _, s := range secrets {
		c := proto.Clone(s).(*tlsv3.Secret)
		if tc := c.GetTlsCertificate(); tc != nil && tc.PrivateKey != nil {
			tc.PrivateKey = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: Redacted}}
		}
		for i := range c.GetSessionTicketKeys().GetKeys() {
			c.GetSessionTicketKeys().Keys[i] = &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: Redacted}}
		}
		out = append(out, c)
	}
	return out
}

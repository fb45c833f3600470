package envoy_test

import (
	"bytes"
	"encoding/json"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"

	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// TestClientKeyNeverShown: the client certificate's key that
// proxy-ssl-secret writes into a cluster is sent to Envoy as it is, and
// replaced wherever resources are shown (translate -f, the Inspector),
// without touching the message that is sent.
func TestClientKeyNeverShown(t *testing.T) {
	m := readIR(t, "../ingress/testdata/upstream.json")
	var key []byte
	for _, c := range m.Clusters {
		if c.Policy != nil && c.Policy.TLS != nil && len(c.Policy.TLS.ClientKey) > 0 {
			key = c.Policy.TLS.ClientKey
		}
	}
	if len(key) == 0 {
		t.Fatal("the upstream case has no cluster with a client certificate")
	}
	res, err := envoy.NewRenderer().Render(m)
	if err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, c := range res.Clusters {
		cl, ok := c.(*clusterv3.Cluster)
		if !ok || cl.GetTransportSocket() == nil {
			continue
		}
		ctx := &tlsv3.UpstreamTlsContext{}
		if err := cl.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx); err != nil {
			t.Fatal(err)
		}
		for _, tc := range ctx.GetCommonTlsContext().GetTlsCertificates() {
			if bytes.Equal(tc.GetPrivateKey().GetInlineBytes(), key) {
				sent++
			}
		}
	}
	if sent != 1 {
		t.Errorf("the key is in %d clusters sent to Envoy, want 1", sent)
	}
	shown, err := envoy.JSONByType(res)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(shown)
	for _, needle := range [][]byte{key, []byte(jsonBase64(key))} {
		if bytes.Contains(raw, needle) {
			t.Errorf("the client key is shown in the resources' JSON")
		}
	}
	if !bytes.Contains(raw, []byte(envoy.Redacted)) {
		t.Error("no redacted key in the resources' JSON")
	}
}

func jsonBase64(b []byte) string {
	out, _ := json.Marshal(b) // []byte encodes as base64, as protojson's bytes do
	return string(bytes.Trim(out, `"`))
}

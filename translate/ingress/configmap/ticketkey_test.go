package configmap

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestSSLSessionTicketKey reads ssl-session-ticket-key as ingress-nginx's
// store.go (writeSSLSessionTicketKey) takes it: base64 of 48 or 80 bytes,
// on the HTTPS listener alone, and not while ssl-session-tickets is false.
func TestSSLSessionTicketKey(t *testing.T) {
	const (
		key80 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk8="
		key48 = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4v"
	)
	seq := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i)
		}
		return b
	}
	// The 48 bytes 0..47 stretched by OpenSSL's HKDF (openssl kdf -keylen
	// 80 -kdfopt digest:SHA256 -kdfopt hexkey:0001..2f -kdfopt
	// "info:ingress-xds ssl-session-ticket-key" HKDF): another
	// implementation's answer.
	stretched, err := hex.DecodeString("71cce4a454588187cb18a703698ac4768e587f0de73b0ec188c99a120483051ae74dcd390a1edbf36ace99bb80ebd1e744634806cf2400f1face5e906ad26f81d0574c1a3e9ba28f257eba89a9a9765a")
	if err != nil {
		t.Fatal(err)
	}
	tab := New(annotations.New(""))
	for _, tc := range []struct {
		name   string
		data   map[string]string
		want   []byte
		issues []string
	}{
		{name: "80 bytes: Envoy's key as it is", data: map[string]string{"ssl-session-ticket-key": key80}, want: seq(80)},
		{name: "a trailing newline, as a YAML block leaves", data: map[string]string{"ssl-session-ticket-key": key80 + "\n"}, want: seq(80)},
		{name: "48 bytes: stretched to 80", data: map[string]string{"ssl-session-ticket-key": key48}, want: stretched},
		{name: "tickets on", data: map[string]string{"ssl-session-ticket-key": key80, "ssl-session-tickets": "true"}, want: seq(80)},
		{name: "tickets off: no key", data: map[string]string{"ssl-session-ticket-key": key80, "ssl-session-tickets": "false"}},
		{name: "not base64", data: map[string]string{"ssl-session-ticket-key": "not base64!"},
			issues: []string{"ssl-session-ticket-key:InvalidConfigMapValue"}},
		{name: "32 bytes", data: map[string]string{"ssl-session-ticket-key": key48[:44]},
			issues: []string{"ssl-session-ticket-key:InvalidConfigMapValue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			if got := s.Downstream(ir.HTTPS, false).SessionTicketKey; !bytes.Equal(got, tc.want) {
				t.Errorf("HTTPS listener's key %x, want %x", got, tc.want)
			}
			if got := s.Downstream(ir.HTTP, false).SessionTicketKey; got != nil {
				t.Errorf("HTTP listener's key %x, want none", got)
			}
			if got := reasons(s); !slices.Equal(got, tc.issues) {
				t.Errorf("issues %v (%v), want %v", got, s.Issues, tc.issues)
			}
		})
	}
}

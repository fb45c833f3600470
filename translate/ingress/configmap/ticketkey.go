package configmap

import (
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// nginx's two lengths of ssl_session_ticket_key: AES-128 with a 16-byte
// HMAC secret, and AES-256 with a 32-byte one. Envoy takes the longer.
const (
	nginxShortTicketKey = 48
	nginxLongTicketKey  = 80
)

// ticketKeyInfo binds the key stretched from a 48-byte one to its use.
const ticketKeyInfo = "ingress-xds ssl-session-ticket-key"

// sslSessionTicketKey reads ssl-session-ticket-key as ingress-nginx's
// store.go writes it for nginx: base64 of 48 or 80 bytes. An 80-byte key
// is Envoy's as it is; a 48-byte one is stretched to 80 by HKDF-SHA256,
// so that every Envoy and every replica given it derive the same key.
func sslSessionTicketKey(_ *Table, s *Settings, _, value string) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(value))
	if err != nil {
		return fmt.Errorf("not base64 (openssl rand 80 | openssl enc -A -base64): treated as unset (keys Envoy makes)")
	}
	switch len(key) {
	case nginxLongTicketKey:
	case nginxShortTicketKey:
		if key, err = hkdf.Key(sha256.New, key, nil, ticketKeyInfo, ir.SessionTicketKeyBytes); err != nil {
			return fmt.Errorf("stretching the key: %w: treated as unset (keys Envoy makes)", err)
		}
	default:
		return fmt.Errorf("%d bytes, where nginx takes 48 or 80: treated as unset (keys Envoy makes)", len(key))
	}
	s.conn.ticketKey = key
	return nil
}

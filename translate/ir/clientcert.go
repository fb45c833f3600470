package ir

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ClientVerify is how a host's HTTPS filter chain treats the client's
// certificate (nginx's ssl_verify_client).
type ClientVerify string

const (
	// VerifyOn: a request without a certificate that verifies against the
	// CA is answered 400 (or sent to the error page).
	VerifyOn ClientVerify = "on"
	// VerifyOptional: a certificate is asked for; one that is presented
	// must verify, or the request is answered as with VerifyOn.
	VerifyOptional ClientVerify = "optional"
	// VerifyOptionalNoCA: a certificate is asked for and never required
	// to verify; the upstream is told whether it did.
	VerifyOptionalNoCA ClientVerify = "optional_no_ca"
	// VerifyOff: no certificate is asked for.
	VerifyOff ClientVerify = "off"
)

// ClientCert is a host's client-certificate policy: ingress-nginx scopes
// it by server (host), so it is the virtual host's, applied to every route
// of the host, and to the TLS handshake of its filter chain.
type ClientCert struct {
	// CA is the PEM bundle of the certificate authorities a client's
	// certificate must chain to.
	CA     PEM          `json:"ca"`
	Verify ClientVerify `json:"verify"`
	// Depth bounds the chain: the CA certificates allowed above the leaf
	// (1: signed by a CA of the bundle itself).
	Depth uint32 `json:"depth"`
	// ErrorPage, when set, is the Location a request refused for its
	// certificate is redirected to (302) instead of a 400.
	ErrorPage string `json:"errorPage,omitempty"`
	// MatchSubject, when set, is an RE2 expression searched for in the
	// subject of the client's certificate (RFC 2253, as nginx's
	// $ssl_client_s_dn): a request whose subject has no match, or without
	// a certificate, is answered 403.
	MatchSubject string `json:"matchSubject,omitempty"`
	// PassCertificate sends the client's certificate, URL-escaped PEM, in
	// the ssl-client-cert request header.
	PassCertificate bool `json:"passCertificate,omitempty"`
	// Handshake makes the TLS handshake alone apply the policy, as
	// Gateway API's frontend validation does: with VerifyOn a handshake
	// without a certificate that verifies fails (the client sees no HTTP
	// answer at all); with VerifyOptionalNoCA a certificate is asked for
	// and none, or any, is accepted. No request is refused for its
	// certificate, none is told of it (no ssl-client-* headers), and plain
	// HTTP is left as it is. Only those two modes, without ErrorPage,
	// MatchSubject or PassCertificate, which act on requests.
	Handshake bool `json:"handshake,omitempty"`
}

// Requested says whether the TLS handshake asks the client for a
// certificate.
func (c *ClientCert) Requested() bool {
	return c != nil && c.Verify != VerifyOff
}

func (c *ClientCert) validate() error {
	switch c.Verify {
	case VerifyOn, VerifyOptional, VerifyOptionalNoCA, VerifyOff:
	default:
		return invalid("Verify", ErrUnknownValue, "unknown verify mode %q", c.Verify)
	}
	if err := CheckCABundle(c.CA); err != nil {
		return invalid("CA", ErrBadCertificate, "CA: %w", err)
	}
	if c.Depth < 1 || c.Depth > 100 {
		return invalid("Depth", ErrOutOfRange, "depth %d out of range (1 to 100)", c.Depth)
	}
	if c.ErrorPage != "" {
		if hasControl(c.ErrorPage) || strings.ContainsAny(c.ErrorPage, " \"<>\\") {
			return invalid("ErrorPage", ErrBadPath, "error page %q holds characters a Location may not", c.ErrorPage)
		}
		if _, err := url.Parse(c.ErrorPage); err != nil {
			return invalid("ErrorPage", ErrBadPath, "error page: %w", err)
		}
	}
	if c.Handshake {
		switch {
		case c.Verify != VerifyOn && c.Verify != VerifyOptionalNoCA:
			return invalid("Verify", ErrConflict, "verify mode %q cannot be applied by the handshake alone (on and optional_no_ca can)", c.Verify)
		case c.ErrorPage != "" || c.MatchSubject != "" || c.PassCertificate:
			return invalid("Handshake", ErrConflict, "an error page, a subject match or passing the certificate act on requests, not on the handshake alone")
		}
	}
	if c.MatchSubject != "" {
		if err := validRegex(c.MatchSubject); err != nil {
			return invalid("MatchSubject", ErrBadRegex, "subject match: %w", err)
		}
	}
	return nil
}

// CheckCABundle accepts PEM with at least one certificate, every block a
// certificate that parses: what Envoy loads as trusted CAs. The front-end
// checks a Secret's bundle with it before it builds a policy, and Validate
// checks the IR's.
func CheckCABundle(b []byte) error {
	n := 0
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if strings.TrimSpace(string(rest)) != "" {
				return errors.New("not PEM")
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("a %s block where certificates belong", block.Type)
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return fmt.Errorf("a certificate does not parse: %w", err)
		}
		n++
	}
	if n == 0 {
		return errors.New("missing, or no certificate in it")
	}
	return nil
}

// Passthrough hands a host's TLS connections, chosen by SNI on the HTTPS
// listeners, to a cluster as they are: the backend terminates TLS itself;
// or, with Terminate, the connection's bytes once Envoy has ended its TLS
// with the host's certificate (TCP, no HTTP).
type Passthrough struct {
	// Cluster is where the connections go, with no HTTP policy of its
	// own (TCP).
	Cluster string `json:"cluster,omitempty"`
	// Split, in Cluster's place, shares the connections between two or
	// more clusters by weight (a TLSRoute's weighted backendRefs), each
	// connection to one.
	Split []PassthroughShare `json:"split,omitempty"`
	// Reject closes the host's connections as they come, before any TLS:
	// the host is passed through, but to no backend (a Gateway API
	// TLSRoute whose backendRefs all failed to resolve). Cluster is then
	// empty.
	Reject bool `json:"reject,omitempty"`
	// Terminate ends the connections' TLS with the host's Certificate,
	// and sends what the client sends within it (Gateway API's TLS
	// listener in Terminate mode).
	Terminate bool `json:"terminate,omitempty"`
}

// PassthroughShare is one cluster of a Passthrough's Split.
type PassthroughShare struct {
	Cluster string `json:"cluster"`
	// Weight is the relative share of the connections.
	Weight uint32 `json:"weight"`
}

// Clusters are the clusters the connections go to: Cluster, or Split's.
func (p *Passthrough) Clusters() []string {
	if p.Cluster != "" {
		return []string{p.Cluster}
	}
	names := make([]string, 0, len(p.Split))
	for _, s := range p.Split {
		names = append(names, s.Cluster)
	}
	return names
}

func (p *Passthrough) validate(vh *VirtualHost, clusters map[string]*Cluster) error {
	if vh.Host == WildcardHost {
		return invalid("", ErrConflict, "passthrough needs a host name to route by SNI")
	}
	if p.Terminate && vh.Certificate == "" {
		return invalid("Terminate", ErrConflict, "terminating TLS needs the host's certificate")
	}
	if p.Reject {
		if p.Cluster != "" || len(p.Split) > 0 {
			return invalid("Cluster", ErrConflict, "a rejecting passthrough has no cluster, not %q", p.Clusters())
		}
		return nil
	}
	switch {
	case p.Cluster != "" && len(p.Split) > 0:
		return invalid("Split", ErrConflict, "a passthrough goes to Cluster or to a Split, not both")
	case p.Cluster == "" && len(p.Split) < 2:
		return invalid("Split", ErrConflict, "a split needs two clusters or more, not %d (one is Cluster)", len(p.Split))
	}
	for _, s := range p.Split {
		if s.Weight == 0 {
			return invalid("Split", ErrConflict, "cluster %q: a split needs weights above zero", s.Cluster)
		}
	}
	for _, c := range p.Clusters() {
		if clusters[c] == nil {
			return invalid("Cluster", ErrUnlistedCluster, "cluster %q is not listed", c)
		}
	}
	return nil
}

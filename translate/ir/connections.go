package ir

import (
	"encoding/json"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Downstream is how a listener treats its clients' connections, beyond
// routing: keep-alive, TLS versions and ciphers, HTTP/2, where the
// client's address is read, what the backend is told of it, and the access
// log (ingress-nginx's controller ConfigMap keys of the same meaning). The
// zero value of each field is Envoy's own behaviour.
type Downstream struct {
	// IdleTimeout is how many seconds a client connection may stay idle
	// between requests before Envoy closes it (nginx's keepalive_timeout);
	// 0: Envoy's default (an hour).
	IdleTimeout uint32 `json:"idleTimeout,omitempty"`
	// MaxRequests is how many requests a client connection may carry
	// (nginx's keepalive_requests; 1: no keep-alive); 0: no bound.
	MaxRequests uint32 `json:"maxRequests,omitempty"`
	// TLSMin and TLSMax bound the TLS versions of an HTTPS listener (a
	// TLSVersion); empty: Envoy's (1.2 to 1.3).
	TLSMin TLSVersion `json:"tlsMin,omitempty"`
	TLSMax TLSVersion `json:"tlsMax,omitempty"`
	// TLSCiphers are the TLS 1.2 (and older) cipher suites of an HTTPS
	// listener, BoringSSL's names, colon-separated, in order of preference;
	// empty: Envoy's.
	TLSCiphers string `json:"tlsCiphers,omitempty"`
	// NoHTTP2 offers only http/1.1 in an HTTPS listener's ALPN.
	NoHTTP2 bool `json:"noHTTP2,omitempty"`
	// ECDHCurves are the key exchange groups of an HTTPS listener,
	// BoringSSL's names (ECDHGroups), colon-separated, in order of
	// preference; empty: Envoy's.
	ECDHCurves string `json:"ecdhCurves,omitempty"`
	// NoSessionTickets and NoSessionCache turn off an HTTPS listener's
	// TLS session resumption by tickets (nginx's ssl_session_tickets off)
	// and by session IDs (ssl_session_cache off); SessionTimeout is how
	// many seconds a session may be resumed (ssl_session_timeout), 0:
	// Envoy's.
	NoSessionTickets bool   `json:"noSessionTickets,omitempty"`
	NoSessionCache   bool   `json:"noSessionCache,omitempty"`
	SessionTimeout   uint32 `json:"sessionTimeout,omitempty"`
	// SessionTicketKey, when set, is the key that encrypts an HTTPS
	// listener's session tickets, SessionTicketKeyBytes long (nginx's
	// ssl_session_ticket_key): Envoys given the same key resume each
	// other's sessions, where each would otherwise make keys of its own.
	SessionTicketKey []byte `json:"sessionTicketKey,omitempty"`
	// KeepBackendServer passes the backend's Server header on, Envoy's
	// own only where it sent none (nginx's proxy_pass_header Server);
	// else Envoy's replaces it.
	KeepBackendServer bool `json:"keepBackendServer,omitempty"`
	// HeadersTimeout is how many seconds a client may take to send a
	// request's headers, then it gets 408 (nginx's
	// client_header_timeout); 0: no bound.
	HeadersTimeout uint32 `json:"headersTimeout,omitempty"`
	// MaxConcurrentStreams bounds the HTTP/2 streams a client connection
	// has open at once (nginx's http2_max_concurrent_streams); 0:
	// Envoy's.
	MaxConcurrentStreams uint32 `json:"maxConcurrentStreams,omitempty"`
	// DropUnderscoreHeaders drops a request header whose name has an
	// underscore before anything reads it, as nginx ignores one
	// (underscores_in_headers off, ignore_invalid_headers on); else Envoy
	// passes it on.
	DropUnderscoreHeaders bool `json:"dropUnderscoreHeaders,omitempty"`
	// ClientHeader, when set, is the request header naming the client's
	// address (one address), trusted from every peer; else
	// X-Forwarded-For is read as the listener's TrustedHops, or
	// TrustedCIDRs, say.
	ClientHeader string `json:"clientHeader,omitempty"`
	// ForwardedHostFrom, when set, is the request header the backend's
	// X-Original-Forwarded-Host copies as the client sent it
	// (forwarded-host-header); else X-Forwarded-Host.
	ForwardedHostFrom string `json:"forwardedHostFrom,omitempty"`
	// TrustedCIDRs, comma-separated, are the peers whose X-Forwarded-For
	// is trusted: the client is the header's rightmost address outside
	// them (the leftmost when all are in). Exclusive with the listener's
	// TrustedHops and with ClientHeader.
	TrustedCIDRs string `json:"trustedCIDRs,omitempty"`
	// ProxyProtocol says that every connection opens with a PROXY
	// protocol header (v1 or v2) naming the client's address and the
	// address and port it reached, which Envoy takes as the connection's
	// (nginx's listen ... proxy_protocol with real_ip_header
	// proxy_protocol); a connection without one is closed. On a plain
	// listener, a connection that reached port 443 is one whose client
	// used HTTPS (lua_ingress.lua, which takes the scheme from it).
	ProxyProtocol bool `json:"proxyProtocol,omitempty"`
	// ProxyProtocolFrom, comma-separated CIDRs, are the peers whose
	// connections a ProxyProtocol listener takes (nginx's
	// set_real_ip_from, which decides whose PROXY header is believed);
	// empty: every peer's.
	ProxyProtocolFrom string `json:"proxyProtocolFrom,omitempty"`
	// ProxyProtocolTimeout bounds the time a ProxyProtocol listener waits
	// for a connection's header (and, on HTTPS, its TLS ClientHello:
	// Envoy's listener filters share one timeout), then closes it; 0:
	// Envoy's 15 s.
	ProxyProtocolTimeout Duration `json:"proxyProtocolTimeout,omitempty"`
	// Forwarded is what the backend's X-Forwarded-For and X-Real-IP say.
	Forwarded Forwarded `json:"forwarded,omitempty"`
	// ProxyHeaders is what the backend's X-Forwarded-Host, -Port,
	// -Proto, -Scheme, X-Scheme and X-Original-Forwarded-For and -Host
	// say: whether a client can choose them.
	ProxyHeaders ProxyHeaders `json:"proxyHeaders,omitempty"`
	// HideHeaders, comma-separated, lowercase, are the backend's response
	// headers the client never sees (nginx's proxy_hide_header at http
	// level: hide-headers); a route's own response headers may set them
	// again.
	HideHeaders string `json:"hideHeaders,omitempty"`
	// OriginalURI gives the backend X-Original-URI, the request's path
	// and query before any rewrite (ingress-nginx's
	// proxy-add-original-uri-header), the client's own replaced.
	OriginalURI bool `json:"originalURI,omitempty"`
	// ForwardedPort is the backend's X-Forwarded-Port under ProxyHeaders:
	// the port clients reach the listener on, which need not be the port
	// Envoy binds (a node's port 80 forwarded to 8080).
	ForwardedPort uint32 `json:"forwardedPort,omitempty"`
	// AccessLog is the line Envoy writes for each request; nil: none.
	AccessLog *AccessLog `json:"accessLog,omitempty"`
}

// AccessLog is a listener's access log (ingress-nginx's log-format-upstream
// and the keys around it): a line for each request but those left out.
type AccessLog struct {
	// Format is the line in Envoy's command operators, ending with a
	// newline; or, when JSON is set, empty.
	Format string `json:"format,omitempty"`
	// JSON is the line as a JSON object whose string values are Envoy
	// format strings (Envoy's json_format, each value escaped as JSON:
	// log-format-escape-json).
	JSON string `json:"json,omitempty"`
	// Path is the file Envoy writes to; empty: its standard output.
	Path string `json:"path,omitempty"`
	// Skip are request URIs (path and query as sent) whose requests are
	// not logged; SkipRegex RE2 expressions found in the URI
	// (skip-access-log-urls).
	Skip      []string `json:"skip,omitempty"`
	SkipRegex []string `json:"skipRegex,omitempty"`
	// UnknownHosts logs the requests for a host no virtual host serves,
	// which ingress-nginx's default server does not log unless
	// enable-access-log-for-default-backend.
	UnknownHosts bool `json:"unknownHosts,omitempty"`
}

// AccessLogPaths are the files an access log may be written to: the
// control plane cannot know what else Envoy's node lets it open, and a
// file Envoy cannot open makes it reject the whole listener.
func AccessLogPaths() []string { return []string{"/dev/stdout", "/dev/stderr"} }

func (a *AccessLog) validate() error {
	var v violations
	switch {
	case (a.Format == "") == (a.JSON == ""):
		v.add("Format", ErrConflict, "exactly one of a format and a JSON format")
	case a.Format != "" && !strings.HasSuffix(a.Format, "\n"):
		v.add("Format", ErrBadFormat, "access log format without its newline")
	case a.JSON != "" && (!json.Valid([]byte(a.JSON)) || !strings.HasPrefix(a.JSON, "{")):
		v.add("JSON", ErrBadFormat, "access log JSON format that is no JSON object")
	}
	if a.Path != "" && !slices.Contains(AccessLogPaths(), a.Path) {
		v.add("Path", ErrUnknownValue, "access log path %q", a.Path)
	}
	for _, re := range a.SkipRegex {
		if _, err := regexp.Compile(re); err != nil {
			v.add("SkipRegex", ErrBadRegex, "%q: %v", re, err)
		}
	}
	return v.join()
}

// TLSVersion is a TLS protocol version.
type TLSVersion string

// The TLS versions.
const (
	TLS10 TLSVersion = "1.0"
	TLS11 TLSVersion = "1.1"
	TLS12 TLSVersion = "1.2"
	TLS13 TLSVersion = "1.3"
)

// SessionTicketKeyBytes is the length of a session ticket key as Envoy
// takes it: a name, an HMAC-SHA256 secret and an AES-256 key.
const SessionTicketKeyBytes = 80

// tlsVersions are the versions, in order.
func tlsVersions() []TLSVersion { return []TLSVersion{TLS10, TLS11, TLS12, TLS13} }

// Forwarded is what the backend is told of the client's address.
type Forwarded string

// The values of Forwarded.
const (
	// ForwardedAppend is Envoy's: X-Forwarded-For as received with the
	// peer's address appended; no X-Real-IP.
	ForwardedAppend Forwarded = ""
	// ForwardedClient sets both X-Forwarded-For and X-Real-IP to the
	// client's address, as ingress-nginx does by default.
	ForwardedClient Forwarded = "client"
	// ForwardedFull is X-Forwarded-For as received with the peer's address
	// appended, and X-Real-IP the client's address (ingress-nginx's
	// compute-full-forwarded-for).
	ForwardedFull Forwarded = "full"
)

// ProxyHeaders says whether the request's own X-Forwarded-* headers reach
// the backend.
type ProxyHeaders string

// The values of ProxyHeaders.
const (
	// ProxyHeadersAsSent is Envoy's: X-Forwarded-Proto set by Envoy at
	// the edge, the other headers as the client sent them.
	ProxyHeadersAsSent ProxyHeaders = ""
	// ProxyHeadersSet sets them from the request whatever the client
	// sent: X-Forwarded-Host its Host, X-Forwarded-Port ForwardedPort,
	// X-Forwarded-Proto, X-Forwarded-Scheme and X-Scheme the listener's
	// scheme; X-Original-Forwarded-For and X-Original-Forwarded-Host are
	// the client's X-Forwarded-For (or ClientHeader) and X-Forwarded-Host,
	// and absent when it sent none.
	ProxyHeadersSet ProxyHeaders = "set"
	// ProxyHeadersTrusted keeps a client's X-Forwarded-Host, -Port and
	// -Proto, setting each only when absent, and makes X-Forwarded-Scheme
	// and X-Scheme its X-Forwarded-Proto: for a listener behind proxies
	// that set them. The X-Original-* headers are as with
	// ProxyHeadersSet.
	ProxyHeadersTrusted ProxyHeaders = "trusted"
)

// Upstream is how Envoy keeps its connections to every backend
// (ingress-nginx's upstream-keepalive-* ConfigMap keys); the zero value of
// each field is Envoy's own behaviour.
type Upstream struct {
	// IdleTimeout is how many seconds a connection to a backend may stay
	// idle before Envoy closes it; 0: Envoy's default (an hour).
	IdleTimeout uint32 `json:"idleTimeout,omitempty"`
	// MaxRequests is how many requests a connection carries before Envoy
	// closes it (1: a connection per request); 0: no bound.
	MaxRequests uint32 `json:"maxRequests,omitempty"`
	// MaxLifetime is how many seconds a connection may live; 0: no bound.
	MaxLifetime uint32 `json:"maxLifetime,omitempty"`
}

// framingHeaders are the headers that frame a response or its connection,
// which Envoy owns: not a listener's to hide.
func framingHeaders() []string {
	return []string{"connection", "content-length", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
}

// ECDHGroups are the key exchange groups an HTTPS listener may name:
// those Envoy's BoringSSL serves.
func ECDHGroups() []string {
	return []string{"X25519", "P-256", "P-384", "P-521", "X25519MLKEM768"}
}

// validCipher reports whether s has the form of a BoringSSL cipher suite
// name (ECDHE-RSA-AES128-GCM-SHA256).
func validCipher(s string) bool {
	return s != "" && !strings.HasPrefix(s, "-") && !strings.HasSuffix(s, "-") &&
		strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == ""
}

func (d *Downstream) validate(l *Listener) error {
	var v violations
	for _, f := range []struct {
		field string
		tv    TLSVersion
	}{{"TLSMin", d.TLSMin}, {"TLSMax", d.TLSMax}} {
		if f.tv != "" && !slices.Contains(tlsVersions(), f.tv) {
			v.add(f.field, ErrUnknownValue, "TLS version %q", f.tv)
		}
	}
	if d.TLSMin != "" && d.TLSMax != "" && slices.Index(tlsVersions(), d.TLSMin) > slices.Index(tlsVersions(), d.TLSMax) {
		v.add("TLSMax", ErrConflict, "TLS versions %s to %s", d.TLSMin, d.TLSMax)
	}
	if d.TLSCiphers != "" {
		for _, c := range strings.Split(d.TLSCiphers, ":") {
			if !validCipher(c) {
				v.add("TLSCiphers", ErrBadCipher, "cipher %q", c)
			}
		}
	}
	if d.ECDHCurves != "" {
		for _, c := range strings.Split(d.ECDHCurves, ":") {
			if !slices.Contains(ECDHGroups(), c) {
				v.add("ECDHCurves", ErrUnknownValue, "key exchange group %q", c)
			}
		}
	}
	if (d.TLSMin != "" || d.TLSMax != "" || d.TLSCiphers != "" || d.ECDHCurves != "" || d.NoHTTP2 || d.NoSessionTickets || d.NoSessionCache || d.SessionTimeout != 0 || d.SessionTicketKey != nil) && l.Protocol != HTTPS {
		v.add("", ErrConflict, "TLS settings on a listener of protocol %s", l.Protocol)
	}
	if d.SessionTicketKey != nil && len(d.SessionTicketKey) != SessionTicketKeyBytes {
		v.add("SessionTicketKey", ErrOutOfRange, "a session ticket key of %d bytes, not %d", len(d.SessionTicketKey), SessionTicketKeyBytes)
	}
	if d.SessionTicketKey != nil && d.NoSessionTickets {
		v.add("SessionTicketKey", ErrConflict, "a session ticket key with session tickets off")
	}
	if d.ClientHeader != "" && validHeaderName(d.ClientHeader) != nil {
		v.add("ClientHeader", ErrBadHeader, "client header %q", d.ClientHeader)
	}
	if d.ForwardedHostFrom != "" && (validHeaderName(d.ForwardedHostFrom) != nil || d.ForwardedHostFrom != strings.ToLower(d.ForwardedHostFrom)) {
		v.add("ForwardedHostFrom", ErrBadHeader, "forwarded host header %q (a lowercase header name)", d.ForwardedHostFrom)
	}
	if d.TrustedCIDRs != "" {
		if d.ClientHeader != "" || l.TrustedHops != 0 {
			v.add("TrustedCIDRs", ErrConflict, "trusted CIDRs with a client header or trusted hops")
		}
		for _, c := range strings.Split(d.TrustedCIDRs, ",") {
			if p, err := netip.ParsePrefix(c); err != nil || p != p.Masked() {
				v.add("TrustedCIDRs", ErrBadAddress, "trusted CIDR %q", c)
			}
		}
	}
	if d.ClientHeader != "" && l.TrustedHops != 0 {
		v.add("ClientHeader", ErrConflict, "a client header with trusted hops")
	}
	if d.MaxConcurrentStreams > math.MaxInt32 {
		v.add("MaxConcurrentStreams", ErrOutOfRange, "%d concurrent streams", d.MaxConcurrentStreams)
	}
	for _, h := range strings.Split(d.HideHeaders, ",") {
		if d.HideHeaders == "" {
			break
		}
		if err := validHeaderName(h); err != nil || strings.HasPrefix(h, ":") || h != strings.ToLower(h) || slices.Contains(framingHeaders(), h) {
			v.add("HideHeaders", ErrBadHeader, "hidden header %q: a lowercase token, not a pseudo-header or one of the response's framing", h)
		}
	}
	if d.ProxyProtocolTimeout < 0 || d.ProxyProtocolTimeout != 0 && !d.ProxyProtocol {
		v.add("ProxyProtocolTimeout", ErrConflict, "a PROXY protocol timeout of %s without the PROXY protocol, or below zero", time.Duration(d.ProxyProtocolTimeout))
	}
	if d.ProxyProtocolFrom != "" {
		if !d.ProxyProtocol {
			v.add("ProxyProtocolFrom", ErrConflict, "PROXY protocol peers without the PROXY protocol")
		}
		for _, c := range strings.Split(d.ProxyProtocolFrom, ",") {
			if p, err := netip.ParsePrefix(c); err != nil || p != p.Masked() {
				v.add("ProxyProtocolFrom", ErrBadAddress, "PROXY protocol peer CIDR %q", c)
			}
		}
	}
	switch d.Forwarded {
	case ForwardedAppend, ForwardedClient, ForwardedFull:
	default:
		v.add("Forwarded", ErrUnknownValue, "forwarded %q", d.Forwarded)
	}
	switch d.ProxyHeaders {
	case ProxyHeadersAsSent:
		if d.ForwardedPort != 0 {
			v.add("ForwardedPort", ErrConflict, "a forwarded port without proxy headers")
		}
	case ProxyHeadersSet, ProxyHeadersTrusted:
		if d.ForwardedPort == 0 || d.ForwardedPort > 65535 {
			v.add("ForwardedPort", ErrOutOfRange, "forwarded port %d", d.ForwardedPort)
		}
	default:
		v.add("ProxyHeaders", ErrUnknownValue, "proxy headers %q", d.ProxyHeaders)
	}
	if d.AccessLog != nil {
		v.nest("AccessLog", "access log: ", ErrBadValue, d.AccessLog.validate())
	}
	return v.join()
}

// validCiphers checks a colon-separated list of cipher suite names; empty
// is none.
func validCiphers(s string) error {
	if s == "" {
		return nil
	}
	for _, c := range strings.Split(s, ":") {
		if !validCipher(c) {
			return invalid("", ErrBadCipher, "cipher %q", c)
		}
	}
	return nil
}

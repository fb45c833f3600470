package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration shown as text ("1.5s") in JSON.
type Duration time.Duration

// MarshalText shows the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads what MarshalText writes.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// RoutePolicy is everything a route does besides matching and its action.
// A nil field is the default: no such policy.
type RoutePolicy struct {
	// HTTPSRedirect makes plain-HTTP listeners answer the route with a
	// redirect to the same URL over HTTPS; HTTPS listeners serve it.
	HTTPSRedirect *HTTPSRedirect `json:"httpsRedirect,omitempty"`
	Timeouts      *Timeouts      `json:"timeouts,omitempty"`
	Retries       *Retries       `json:"retries,omitempty"`
	Rewrite       *Rewrite       `json:"rewrite,omitempty"`
	// RequestHeaders change what the upstream receives; ResponseHeaders
	// what the client receives.
	RequestHeaders  *HeaderChanges `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderChanges `json:"responseHeaders,omitempty"`
	// Mirrors copy requests to other clusters, whose answers are dropped.
	Mirrors []Mirror `json:"mirrors,omitempty"`
	CORS    *CORS    `json:"cors,omitempty"`
	IPRules *IPRules `json:"ipRules,omitempty"`
	// RateLimit bounds each client's requests (ratelimit.go); nil: none.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// Connections bounds each client's requests in flight (connlimit.go);
	// nil: none.
	Connections *ConnectionLimit `json:"connections,omitempty"`
	// ResponseRate slows each response (responserate.go); nil: full
	// speed.
	ResponseRate *ResponseRate `json:"responseRate,omitempty"`
	// Auth asks the client who it is (auth.go); nil: nobody is asked.
	Auth *Auth `json:"auth,omitempty"`
	// RequestBody bounds the request body; nil: no bound.
	RequestBody *RequestBody `json:"requestBody,omitempty"`
	// Affinity keeps a client on one endpoint by a cookie; nil: none.
	Affinity *SessionAffinity `json:"affinity,omitempty"`
	// ErrorPages replace responses of some codes (errorpages.go); nil:
	// none.
	ErrorPages *ErrorPages `json:"errorPages,omitempty"`
	// ResponseRewrite rewrites the URLs a response names of its upstream
	// (responserewrite.go); nil: none.
	ResponseRewrite *ResponseRewrite `json:"responseRewrite,omitempty"`
	// Hash is what a cluster with the RingHash load balancer hashes of
	// the request to pick an endpoint: every part present, combined.
	Hash []HashPart `json:"hash,omitempty"`
	// NoAccessLog leaves the route's requests out of the access log
	// (enable-access-log: false).
	NoAccessLog bool `json:"noAccessLog,omitempty"`
	// Tracing traces the route's requests (enable-opentelemetry), under
	// its listener's Tracing; nil: not traced.
	Tracing *RouteTracing `json:"tracing,omitempty"`
	// Compression gzips its responses (compression.go); nil: none.
	Compression *Compression `json:"compression,omitempty"`
}

// HashKind is a part of a request that can be hashed.
type HashKind string

// The kinds of HashPart.
const (
	HashPath     HashKind = "Path"     // the path with its query
	HashHost     HashKind = "Host"     // the Host (:authority)
	HashSourceIP HashKind = "SourceIP" // the client's address
	HashHeader   HashKind = "Header"   // Name is the header's, lower case
	HashCookie   HashKind = "Cookie"   // Name is the cookie's
	HashQuery    HashKind = "Query"    // Name is the query parameter's
)

// HashPart is one part of the request hashed.
type HashPart struct {
	Kind HashKind `json:"kind"`
	Name string   `json:"name,omitempty"`
}

// HTTPSRedirect is a redirect from plain HTTP to HTTPS, to the request's
// host without its port.
type HTTPSRedirect struct {
	// Code is 301, 302, 303, 307 or 308.
	Code uint32 `json:"code"`
	// Port, when not 0, is written into the URL.
	Port uint32 `json:"port,omitempty"`
	// StripTrailingSlash is Redirect's.
	StripTrailingSlash bool `json:"stripTrailingSlash,omitempty"`
	// OnlyWithCertificate redirects only when the route's virtual host
	// has a Certificate; otherwise the route is served on plain HTTP too.
	OnlyWithCertificate bool `json:"onlyWithCertificate,omitempty"`
}

// Timeouts bound a request.
type Timeouts struct {
	// Request bounds the whole exchange, from the end of the request to
	// the end of the response; zero means no bound.
	Request Duration `json:"request"`
	// Idle bounds the time with no bytes in either direction; zero keeps
	// the listener's.
	Idle Duration `json:"idle,omitempty"`
}

// Retries retry a failed request on another endpoint.
type Retries struct {
	// Attempts is the number of retries after the first try.
	Attempts uint32 `json:"attempts"`
	// On lists the conditions, in Envoy's x-envoy-retry-on vocabulary
	// (connect-failure, reset, 5xx, gateway-error, retriable-4xx, ...).
	On []string `json:"on"`
	// PerTry bounds each try; zero means the request's bound.
	PerTry Duration `json:"perTry,omitempty"`
	// StatusCodes are the response codes retried, when On has
	// "retriable-status-codes" (and only then).
	StatusCodes []uint32 `json:"statusCodes,omitempty"`
	// NotMethods are request methods never retried (nginx does not retry
	// non-idempotent requests).
	NotMethods []string `json:"notMethods,omitempty"`
	// Backoff is the least wait before a retry (later ones may wait
	// longer); zero: the renderer's default.
	Backoff Duration `json:"backoff,omitempty"`
}

// SessionAffinity keeps a client on the endpoint a cookie names: a request
// without the cookie (or naming an endpoint that is no longer ready) is
// balanced as usual, and its response sets the cookie to the endpoint that
// answered. The cookie is HttpOnly.
type SessionAffinity struct {
	// Cookie is the cookie's name, an HTTP token.
	Cookie string `json:"cookie"`
	// Path and Domain are the cookie's; empty: none. Neither holds ";",
	// spaces or control characters.
	Path   string `json:"path,omitempty"`
	Domain string `json:"domain,omitempty"`
	// SameSite is Strict, Lax, None, or empty (not sent).
	SameSite string `json:"sameSite,omitempty"`
	// ConditionalSameSiteNone leaves SameSite=None out for the browsers
	// known to refuse a cookie with it.
	ConditionalSameSiteNone bool `json:"conditionalSameSiteNone,omitempty"`
	// MaxAge is the cookie's lifetime; zero: a session cookie.
	MaxAge Duration `json:"maxAge,omitempty"`
	// Secure makes the cookie Secure over plain HTTP too; over HTTPS it
	// always is.
	Secure bool `json:"secure,omitempty"`
}

// RequestBody bounds a request's body: a larger one is answered 413. The
// body is held until it is whole (or over the bound) before it is
// forwarded.
type RequestBody struct {
	// MaxBytes is at least 1 and fits in 32 bits (Envoy's buffer limit).
	MaxBytes uint32 `json:"maxBytes"`
}

// Rewrite changes the request before it is forwarded. At most one of
// Prefix and Regex is set.
type Rewrite struct {
	// Prefix replaces the part of the path the route's Prefix matched.
	Prefix string `json:"prefix,omitempty"`
	// Regex replaces every match of Pattern in the path by Substitution
	// (RE2; \1 names a capture group).
	Regex *RegexRewrite `json:"regex,omitempty"`
	// Host replaces the Host header.
	Host string `json:"host,omitempty"`
}

// RegexRewrite is an RE2 substitution over the path.
type RegexRewrite struct {
	Pattern      string `json:"pattern"`
	Substitution string `json:"substitution"`
}

// Header is a header name and value.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Parts, when set, make the value instead of Value (then empty): each
	// request's own, from the parts of the request they name.
	Parts []ValuePart `json:"parts,omitempty"`
}

// ValuePart is a piece of a header value: Text as it is, or the value of
// Var (with Name for the variables that take one), evaluated for each
// request. A header whose value comes out empty is not sent.
type ValuePart struct {
	Text string   `json:"text,omitempty"`
	Var  Variable `json:"var,omitempty"`
	Name string   `json:"name,omitempty"`
}

// Variable is a property of the exchange a header value may hold.
type Variable string

// The variables of ValuePart.
const (
	VarRequestHeader  Variable = "RequestHeader"  // Name is the header's, lower case; as the listener's Downstream left it
	VarResponseHeader Variable = "ResponseHeader" // Name is the header's; response headers only
	VarClientAddress  Variable = "ClientAddress"  // the client's address, without port
	VarScheme         Variable = "Scheme"         // http or https, of the client's connection
	VarHost           Variable = "Host"           // the request's host, without port
	VarPath           Variable = "Path"           // the path with its query, as received
	VarURI            Variable = "URI"            // the path without its query, as forwarded
	VarRequestID      Variable = "RequestID"      // the request's X-Request-ID
	VarClientCert     Variable = "ClientCert"     // the client's TLS certificate, URL-escaped PEM; empty without one
	VarClientSubject  Variable = "ClientSubject"  // its subject DN (RFC 2253); empty without one
	VarClientIssuer   Variable = "ClientIssuer"   // its issuer DN (RFC 2253); empty without one
)

// HeaderChanges are applied in this order: Remove, Set (replacing any
// value), Add (appending), AddOnSuccess.
type HeaderChanges struct {
	Remove []string `json:"remove,omitempty"`
	Set    []Header `json:"set,omitempty"`
	Add    []Header `json:"add,omitempty"`
	// AddOnSuccess are appended to responses of status 200, 201, 204,
	// 206, 301, 302, 303, 304, 307 and 308 only (nginx's add_header
	// without "always"); responses only.
	AddOnSuccess []Header `json:"addOnSuccess,omitempty"`
	// Expires, on the statuses of AddOnSuccess and before it, replaces
	// the response's Expires and every Cache-Control with how long it may
	// be cached; nil: unchanged. Responses only.
	Expires *Expiry `json:"expires,omitempty"`
}

// Expiry is how long a response may be cached, written as an Expires
// date and a Cache-Control: exactly one of Seconds (which may be 0),
// Epoch and Max.
type Expiry struct {
	// Seconds after the response: Expires then, and Cache-Control
	// max-age=Seconds, or no-cache when negative.
	Seconds int64 `json:"seconds,omitempty"`
	// Epoch: expired long ago (Cache-Control: no-cache).
	Epoch bool `json:"epoch,omitempty"`
	// Max: the furthest date the renderer writes (Cache-Control: ten
	// years).
	Max bool `json:"max,omitempty"`
}

// MaxExpirySeconds bounds Expiry.Seconds either way: a hundred years.
const MaxExpirySeconds = 100 * 365 * 24 * 3600

// Mirror copies a share of requests to a cluster.
type Mirror struct {
	Cluster string `json:"cluster"`
	// Percent of requests mirrored, 0 to 100.
	Percent uint32 `json:"percent"`
	// Host, when set, is the Host header of the copies; otherwise Envoy's
	// (the request's, "-shadow" appended).
	Host string `json:"host,omitempty"`
	// Path, when set, is the path of the copies (mirror.go); otherwise
	// the request's. Path and NoBody need a cluster whose policy has
	// Mirror.
	Path *MirrorPath `json:"path,omitempty"`
	// NoBody sends the copies without the request's body.
	NoBody bool `json:"noBody,omitempty"`
}

// CORS is cross-origin resource sharing as ingress-nginx does it: for a
// request whose origin is allowed, every response of the route (the
// backend's, and the proxy's own: 401, 403, 503...) carries the CORS
// headers, replacing the backend's own, and any OPTIONS request (any
// preflight, with PreflightsOnly) is answered
// 204 with them, before any access check and without reaching the backend.
// A request whose origin is not allowed is served as without CORS.
type CORS struct {
	// AnyOrigin allows every request, with an Origin header or without:
	// Access-Control-Allow-Origin is then "*" (the request's Origin with
	// EchoWildcards).
	AnyOrigin bool `json:"anyOrigin,omitempty"`
	// AllowOrigins, when not AnyOrigin, match the Origin header in any
	// case; an allowed origin is echoed as the client sent it.
	AllowOrigins []StringMatch `json:"allowOrigins,omitempty"`
	// The headers' values, as sent; empty: the header is not sent.
	AllowMethods  string `json:"allowMethods,omitempty"`
	AllowHeaders  string `json:"allowHeaders,omitempty"`
	ExposeHeaders string `json:"exposeHeaders,omitempty"`
	// MaxAgeSeconds is Access-Control-Max-Age, always sent.
	MaxAgeSeconds int64 `json:"maxAgeSeconds"`
	// AllowCredentials sends Access-Control-Allow-Credentials: true.
	AllowCredentials bool `json:"allowCredentials,omitempty"`
	// EchoWildcards answers with what the request asks for where the
	// policy allows anything: Access-Control-Allow-Origin is the
	// request's Origin under AnyOrigin, and an AllowMethods or
	// AllowHeaders of "*" is the request's Access-Control-Request-Method
	// or -Headers (a header the request lacks is not sent). Browsers do
	// not take "*" as a wildcard for a request with credentials.
	EchoWildcards bool `json:"echoWildcards,omitempty"`
	// PreflightsOnly answers only preflights, the OPTIONS requests with
	// an Origin and an Access-Control-Request-Method, and every one of
	// them: an origin not allowed gets 204 without the CORS headers, so
	// no preflight reaches the backend. Any other OPTIONS request is
	// forwarded as other methods are.
	PreflightsOnly bool `json:"preflightsOnly,omitempty"`
}

// IPRules admit or refuse clients by address: a client in Deny is refused;
// then, when Allow is not empty, a client not in Allow is refused. Refused
// requests get 403. Entries are CIDRs (a single address is a /32 or /128).
type IPRules struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// UpstreamProtocol is what a cluster speaks to its endpoints.
type UpstreamProtocol string

const (
	// UpstreamHTTP1 is HTTP/1.1, the default.
	UpstreamHTTP1 UpstreamProtocol = ""
	// UpstreamHTTP2 is HTTP/2: h2 over TLS, h2c (prior knowledge)
	// without.
	UpstreamHTTP2 UpstreamProtocol = "HTTP2"
)

// LoadBalancer is how a cluster picks an endpoint.
type LoadBalancer string

const (
	RoundRobin   LoadBalancer = "" // the default
	LeastRequest LoadBalancer = "LeastRequest"
	Random       LoadBalancer = "Random"
	// RingHash picks the endpoint by a consistent hash of the parts of
	// the request its routes' policies name (RoutePolicy.Hash).
	RingHash LoadBalancer = "RingHash"
)

// ClusterPolicy is how a cluster talks to its backend. The zero value is
// the default, and a cluster with the default policy has no Policy.
type ClusterPolicy struct {
	Protocol     UpstreamProtocol `json:"protocol,omitempty"`
	TLS          *UpstreamTLS     `json:"tls,omitempty"`
	LoadBalancer LoadBalancer     `json:"loadBalancer,omitempty"`
	// ConnectTimeout bounds connecting to an endpoint; zero is the
	// renderer's default.
	ConnectTimeout  Duration         `json:"connectTimeout,omitempty"`
	CircuitBreakers *CircuitBreakers `json:"circuitBreakers,omitempty"`
	// ServiceAddress, when set, is the one address the cluster sends to
	// (a Service's cluster IP) on its backend's port, instead of the
	// backend's endpoints.
	ServiceAddress string `json:"serviceAddress,omitempty"`
	// Mirror makes the cluster one that takes copies of requests
	// (Mirror's Path and NoBody): only mirror policies send to it.
	Mirror bool `json:"mirror,omitempty"`
}

// UpstreamTLS makes a cluster speak TLS to its endpoints.
type UpstreamTLS struct {
	// SNI is the server name sent; empty sends none.
	SNI string `json:"sni,omitempty"`
	// CA, when set, is the PEM bundle the endpoint's certificate must
	// chain to; without it the certificate is not verified.
	CA PEM `json:"ca,omitempty"`
	// VerifyName, with CA, is a DNS name the certificate must carry.
	VerifyName string `json:"verifyName,omitempty"`
	// SubjectAltNames, with CA and in place of VerifyName, are names of
	// which the certificate must carry at least one (Gateway API's
	// BackendTLSPolicy subjectAltNames).
	SubjectAltNames []SubjectAltName `json:"subjectAltNames,omitempty"`
	// VerifyDepth, with CA, bounds the chain (0: Envoy's default).
	VerifyDepth uint32 `json:"verifyDepth,omitempty"`
	// ClientChain and ClientKey, both or neither, are the certificate
	// presented to the endpoint.
	ClientChain PEM `json:"clientChain,omitempty"`
	ClientKey   PEM `json:"clientKey,omitempty"`
	// MinVersion and MaxVersion are TLSv1.2 or TLSv1.3; empty: Envoy's.
	MinVersion string `json:"minVersion,omitempty"`
	MaxVersion string `json:"maxVersion,omitempty"`
	// Ciphers are TLS 1.2 cipher suite names; none: Envoy's.
	Ciphers []string `json:"ciphers,omitempty"`
}

// SubjectAltName is one name an endpoint's certificate may carry: a DNS
// name (a wildcard certificate's covers it too, Envoy's rule) or a URI
// (a SPIFFE ID, say), exactly one of the two.
type SubjectAltName struct {
	DNS string `json:"dns,omitempty"`
	URI string `json:"uri,omitempty"`
}

// CircuitBreakers bound what a cluster has in flight, per Envoy; zero
// fields keep Envoy's defaults.
type CircuitBreakers struct {
	MaxConnections     uint32 `json:"maxConnections,omitempty"`
	MaxPendingRequests uint32 `json:"maxPendingRequests,omitempty"`
	MaxRequests        uint32 `json:"maxRequests,omitempty"`
	MaxRetries         uint32 `json:"maxRetries,omitempty"`
}

// IsDefault reports whether p changes nothing.
func (p *ClusterPolicy) IsDefault() bool {
	return p == nil || (p.Protocol == UpstreamHTTP1 && p.TLS == nil && p.LoadBalancer == RoundRobin &&
		p.ConnectTimeout == 0 && p.CircuitBreakers == nil && p.ServiceAddress == "" && !p.Mirror)
}

// ClusterName names the cluster that sends to backend with policy: the
// backend's own name for the default policy, else the backend's name and a
// hash of the policy (as Contour names its clusters), so that two routes
// asking for the same policy share one cluster and two policies never do.
func ClusterName(backend string, p *ClusterPolicy) string {
	if p.IsDefault() {
		return backend
	}
	raw, err := json.Marshal(p)
	if err != nil {
		// A struct of strings, numbers and pointers to such always
		// encodes.
		panic(fmt.Sprintf("ir: encoding a cluster policy: %v", err))
	}
	sum := sha256.Sum256(raw)
	return backend + "/" + hex.EncodeToString(sum[:5])
}

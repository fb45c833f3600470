// Package ir is the intermediate representation between the front-ends,
// which turn Kubernetes objects into it (translate/ingress today, Gateway
// API routes later), and the Envoy renderer (translate/envoy), which turns
// it into xDS resources. It says what is routed where and with which
// policy, in our own vocabulary, with no Kubernetes rules and no Envoy
// detail.
//
// The contract:
//   - An IR and every value it points to are never mutated once the
//     front-end's merge has produced them. A front-end hands out the very
//     same value again, in the next IR, for what did not change, and a
//     changed value is a new one: consumers may reuse their work by
//     identity (the renderer does), and may share values between IRs.
//   - Lists are sorted as each field says, names are unique, and every
//     reference resolves: a route forwards only to clusters the IR lists,
//     a cluster sends only to a backend it lists (an aggregate cluster
//     only to clusters it lists), a virtual host serves
//     only a certificate it lists. Validate checks all of it.
//   - It round-trips through JSON (golden files at both seams).
package ir

import (
	"k8s.io/apimachinery/pkg/types"
)

// IR is one whole configuration.
type IR struct {
	// Listeners are sorted by Port.
	Listeners []*Listener `json:"listeners"`
	// VirtualHosts are sorted by Host. Every virtual host is served on
	// every HTTP listener, and, with a Certificate, on every HTTPS one.
	VirtualHosts []*VirtualHost `json:"virtualHosts"`
	// Clusters are sorted by Name and are exactly those routes forward to
	// and those aggregate clusters send to.
	Clusters []*Cluster `json:"clusters"`
	// Backends are sorted by Name and are exactly those clusters send to.
	Backends []*Backend `json:"backends"`
	// Certificates are sorted by Name and are exactly those virtual hosts
	// serve.
	Certificates []*Certificate `json:"certificates"`
	// Problems found on the way, sorted by object, then message.
	Problems []Problem `json:"problems"`
	// Upstream is how Envoy keeps its connections to every backend
	// (connections.go); nil: Envoy's way.
	Upstream *Upstream `json:"upstream,omitempty"`
	// OwnListeners each serve virtual hosts of their own, apart from
	// VirtualHosts and from one another: a port (and an address in front
	// of it) that only its hosts are reached on, as a Gateway with an
	// address of its own is (translate/gatewayapi). Sorted by the
	// listener's Port; their names and ports are every listener's own.
	OwnListeners []*OwnListener `json:"ownListeners,omitempty"`
}

// OwnListener is a listener with the virtual hosts it alone serves,
// sorted by Host; they use the IR's clusters and certificates.
type OwnListener struct {
	Listener     *Listener      `json:"listener"`
	VirtualHosts []*VirtualHost `json:"virtualHosts"`
}

// Protocol is what a listener speaks.
type Protocol string

const (
	// HTTP is plain-text HTTP/1.1 (and h2c prior knowledge).
	HTTP Protocol = "HTTP"
	// HTTPS terminates TLS, choosing the certificate by SNI, then HTTP.
	HTTPS Protocol = "HTTPS"
)

// Listener is one port Envoy listens on.
type Listener struct {
	Name     string   `json:"name"`
	Address  string   `json:"address"`
	Port     uint32   `json:"port"`
	Protocol Protocol `json:"protocol"`
	// TrustedHops is how many proxies in front of Envoy the operator
	// trusts to append the client's address to X-Forwarded-For: the
	// client is the address that many hops from the header's right, and
	// with 0 the connection's peer, whatever the header says.
	TrustedHops uint32 `json:"trustedHops,omitempty"`
	// EscapedSlashes is what becomes of a request whose path holds an
	// escaped slash (%2F, %5C); empty: EscapedSlashesRedirect.
	EscapedSlashes EscapedSlashes `json:"escapedSlashes,omitempty"`
	// HSTS, on an HTTPS listener, is the Strict-Transport-Security value
	// every response it sends carries, replacing the backend's
	// (ingress-nginx's hsts ConfigMap keys); empty: none.
	HSTS string `json:"hsts,omitempty"`
	// ResponseHeaders change every response it sends to a route's
	// request before the route's own changes, which win for a name both
	// change (ingress-nginx's add-headers, at nginx's http level): Set
	// and Remove only; nil: none.
	ResponseHeaders *HeaderChanges `json:"responseHeaders,omitempty"`
	// Brotli compresses every route's responses with brotli, Level its
	// quality, for the clients that accept br, before any route's gzip
	// (Compression), which then leaves them (ingress-nginx's
	// enable-brotli, at nginx's http level, where ngx_brotli runs ahead
	// of gzip); nil: none.
	Brotli *Compression `json:"brotli,omitempty"`
	// Block refuses the requests whose headers it names (block.go);
	// nil: none.
	Block *RequestBlock `json:"block,omitempty"`
	// Downstream is how it treats its clients' connections (keep-alive,
	// TLS, client address, access log: connections.go); nil: Envoy's way.
	Downstream *Downstream `json:"downstream,omitempty"`
	// LocalReplyCodes are the statuses of the answers the listener makes
	// itself when a backend cannot be reached; nil: Envoy's (503).
	LocalReplyCodes *LocalReplyCodes `json:"localReplyCodes,omitempty"`
	// Tracing is where the spans of its traced routes go (tracing.go);
	// nil: no route is traced.
	Tracing *Tracing `json:"tracing,omitempty"`
	// RequestMetrics sends every request's figures to the authorisation
	// service beside Envoy, which counts them as ingress-nginx's request
	// metrics (nginx_ingress_controller_requests, ...), labelled with
	// the names of the route's Log.
	RequestMetrics bool `json:"requestMetrics,omitempty"`
	// KeepHostPort passes a request's Host to the backend as the client
	// sent it, a port included, and matches virtual hosts without the
	// port (Gateway API's way). Otherwise the port is dropped before
	// routing, and nothing after sees it (nginx's $host, which the
	// Ingress front-end's redirects, hashing and snippets read).
	KeepHostPort bool `json:"keepHostPort,omitempty"`
	// PublicPort, when set, is the port clients reach the listener on
	// (a Service's port in front of it), where it differs from Port: a
	// redirect to another host on the same scheme names it, as the
	// listener's port (Gateway API's RequestRedirect without a port).
	PublicPort uint32 `json:"publicPort,omitempty"`
}

// LocalReplyCodes replace the status Envoy gives its own answer when a
// request fails on the way to an endpoint (503 for every cause); a zero
// field keeps it. A Service with no endpoint to send to is not among them:
// it keeps its 503. They apply to Envoy's answers only, never to a
// backend's response.
type LocalReplyCodes struct {
	// UpstreamFailure is the status when the connection to the endpoint
	// fails (refused, TLS handshake or certificate verification failed)
	// or is closed or reset before the response begins.
	UpstreamFailure uint32 `json:"upstreamFailure,omitempty"`
	// ConnectTimeout is the status when connecting to the endpoint times
	// out; zero: UpstreamFailure's (a connect timeout is a failure to
	// connect).
	ConnectTimeout uint32 `json:"connectTimeout,omitempty"`
}

// EscapedSlashes is what a listener does with a path holding %2F or %5C.
// nginx chooses a location by the decoded path and forwards the path as
// sent; Envoy can do only one of the two. Routing by the path as sent lets
// /admin%2Fx miss the /admin route, and the source ranges or
// authentication on it, and reach another Ingress's /; so the default
// decodes first.
type EscapedSlashes string

// The values of EscapedSlashes.
const (
	// EscapedSlashesRedirect answers with a redirect to the decoded path,
	// which is then routed (and checked) as any other: the default.
	EscapedSlashesRedirect EscapedSlashes = ""
	// EscapedSlashesForward routes by the decoded path and forwards it
	// decoded.
	EscapedSlashesForward EscapedSlashes = "forward"
	// EscapedSlashesReject answers 400.
	EscapedSlashesReject EscapedSlashes = "reject"
	// EscapedSlashesKeep routes and forwards the path as sent, as
	// ingress-nginx forwards it, for backends that need %2F: the
	// operator's choice, since path-scoped access controls can then be
	// passed by.
	EscapedSlashesKeep EscapedSlashes = "keep"
)

// WildcardHost is the virtual host of requests no other host matches.
const WildcardHost = "*"

// VirtualHost is every route of one host.
type VirtualHost struct {
	// Host is a lower-case DNS name, a *.wildcard covering exactly one
	// label (or any number, with AnyDepth), or WildcardHost.
	Host string `json:"host"`
	// AnyDepth makes a *.wildcard Host cover one label or more in front
	// of its suffix (*.example.com matches a.b.example.com), as a
	// Gateway API hostname does, where an Ingress's covers exactly one.
	AnyDepth bool `json:"anyDepth,omitempty"`
	// Routes are in match order: the first that matches wins.
	Routes []*Route `json:"routes"`
	// Certificate names the Certificate served for this host over HTTPS;
	// empty when the host is served over plain HTTP only.
	Certificate string `json:"certificate,omitempty"`
	// Aliases are other names of the host, served exactly as it is (and
	// with its certificate); none is a virtual host of its own, nor the
	// alias of another.
	Aliases []string `json:"aliases,omitempty"`
	// ClientCert is how the host's clients are asked for certificates
	// (clientcert.go); nil: they are not.
	ClientCert *ClientCert `json:"clientCert,omitempty"`
	// TLSCiphers, when set, are the host's TLS 1.2 cipher suites over
	// HTTPS (as Downstream.TLSCiphers, which they replace for the host).
	TLSCiphers string `json:"tlsCiphers,omitempty"`
	// Passthrough, when set, sends the host's TLS connections to a backend
	// that terminates TLS itself; its routes still serve plain HTTP.
	Passthrough *Passthrough `json:"passthrough,omitempty"`
	// DefaultChain, with a Certificate, serves the host over HTTPS among
	// the connections no SNI of another host takes (those of WildcardHost,
	// with its certificate) rather than on a chain of its own: a Gateway
	// API host attached through the HTTPS listener without a hostname
	// belongs to that listener. Where no WildcardHost is served over
	// HTTPS, the host has a chain of its own all the same.
	DefaultChain bool `json:"defaultChain,omitempty"`
	// MisdirectOthers, on a host with a chain of its own, answers 421
	// (Misdirected Request) to a request of that chain whose Host it does
	// not serve, where otherwise no route matches (404): a Gateway API
	// HTTPS listener takes only its own hosts.
	MisdirectOthers bool `json:"misdirectOthers,omitempty"`
}

// Object names the Kubernetes object a value came from, for problems and
// for people reading the IR.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Route is a match and what to do with what it matches.
type Route struct {
	Match  Match        `json:"match"`
	Action Action       `json:"action"`
	Policy *RoutePolicy `json:"policy,omitempty"`
	Source *Object      `json:"source"`
	// Only, when set, serves the route on the listeners of that protocol
	// alone (a Gateway API route attached through HTTPS listeners only is
	// never served over plain HTTP); empty: on every listener that serves
	// its host.
	Only Protocol `json:"only,omitempty"`
	// Log names what ingress-nginx's access log says of the route's
	// requests beyond its Source; nil: the access log asks for none.
	Log *RouteLog `json:"log,omitempty"`
}

// RouteLog is what ingress-nginx's access log variables say of a route's
// requests, each only when the format asks for it (empty otherwise): its
// Ingress ($namespace, $ingress_name), its Ingress backend's Service and
// port as the Ingress writes them ($service_name, $service_port),
// ingress-nginx's name of that upstream (namespace-service-port:
// $proxy_upstream_name), and, for a route a canary may take, the canary's
// cluster and upstream name ($proxy_alternative_upstream_name when the
// canary takes a request). A canary's routes say the mainline's Service,
// as ingress-nginx's location does. Path is the Ingress path as written
// ($location_path), which the request metrics read.
type RouteLog struct {
	Namespace      string `json:"namespace,omitempty"`
	Ingress        string `json:"ingress,omitempty"`
	Service        string `json:"service,omitempty"`
	ServicePort    string `json:"servicePort,omitempty"`
	Upstream       string `json:"upstream,omitempty"`
	CanaryCluster  string `json:"canaryCluster,omitempty"`
	CanaryUpstream string `json:"canaryUpstream,omitempty"`
	Path           string `json:"path,omitempty"`
}

// RouteMetadata is the namespace of the route metadata the renderer writes
// of a route's RouteLog and Source, which the access log's command
// operators read, and the keys in it.
const (
	RouteMetadata      = "ingress-xds"
	MetaNamespace      = "namespace"
	MetaIngress        = "ingress"
	MetaService        = "service"
	MetaServicePort    = "service_port"
	MetaUpstream       = "upstream"
	MetaCanaryCluster  = "canary_cluster"
	MetaCanaryUpstream = "canary_upstream"
	MetaPath           = "path"
)

// PathType is how a route matches the request path.
type PathType string

const (
	// PathExact matches the path exactly (case-sensitive, query ignored).
	PathExact PathType = "Exact"
	// PathPrefix matches whole path segments: /foo matches /foo, /foo/
	// and /foo/bar, not /foobar. A Prefix value has no trailing slash
	// ("/" stays "/").
	PathPrefix PathType = "Prefix"
	// PathRegex matches the whole path with an RE2 expression.
	PathRegex PathType = "Regex"
)

// Match is what a request must have for a route to apply: all of it.
type Match struct {
	PathType PathType      `json:"pathType"`
	Path     string        `json:"path"`
	Headers  []HeaderMatch `json:"headers,omitempty"`
	Query    []QueryMatch  `json:"query,omitempty"`
}

// StringMatch matches a value exactly or by an RE2 expression over the
// whole value; with neither set, any value matches (the header or
// parameter must only be present).
type StringMatch struct {
	Exact string `json:"exact,omitempty"`
	Regex string `json:"regex,omitempty"`
}

// HeaderMatch requires a request header. Names are case-insensitive.
type HeaderMatch struct {
	Name  string      `json:"name"`
	Value StringMatch `json:"value"`
	// Invert matches a request the rest does not match.
	Invert bool `json:"invert,omitempty"`
	// MissingIsEmpty matches an absent header as an empty value (nginx's
	// $http_* of a header not sent), instead of never matching it.
	MissingIsEmpty bool `json:"missingIsEmpty,omitempty"`
}

// QueryMatch requires a query parameter.
type QueryMatch struct {
	Name  string      `json:"name"`
	Value StringMatch `json:"value"`
}

// Action is what a route does: exactly one of its fields is set.
type Action struct {
	Forward  *Forward        `json:"forward,omitempty"`
	Redirect *Redirect       `json:"redirect,omitempty"`
	Direct   *DirectResponse `json:"direct,omitempty"`
}

// Forward proxies to clusters, split by weight.
type Forward struct {
	Clusters []WeightedCluster `json:"clusters"`
}

// WeightedCluster is one share of a Forward.
type WeightedCluster struct {
	Cluster string `json:"cluster"`
	// Weight is the relative share; with one cluster it is ignored.
	Weight uint32 `json:"weight"`
	// TLSCluster, when set, takes the share's requests that arrived over
	// TLS (on an HTTPS listener) in Cluster's place: the same backend
	// reached another way, as ingress-nginx's AUTO_HTTP reaches it by
	// the request's scheme. Empty: Cluster takes every request.
	TLSCluster string `json:"tlsCluster,omitempty"`
	// RequestHeaders and ResponseHeaders change the share's requests and
	// their responses (on every status: neither adds on success nor
	// sets an expiry), after the route policy's changes, so that where
	// both change one header the share's value is the one sent; nil: no
	// change.
	RequestHeaders  *HeaderChanges `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderChanges `json:"responseHeaders,omitempty"`
}

// For is the cluster that takes the share's requests on a listener: over
// TLS or not.
func (wc WeightedCluster) For(tls bool) string {
	if tls && wc.TLSCluster != "" {
		return wc.TLSCluster
	}
	return wc.Cluster
}

// Redirect answers with a redirect. Empty fields keep the request's part.
type Redirect struct {
	Scheme string `json:"scheme,omitempty"`
	Host   string `json:"host,omitempty"`
	Port   uint32 `json:"port,omitempty"`
	// Path replaces the whole path.
	Path string `json:"path,omitempty"`
	// StripQuery drops the query string.
	StripQuery bool `json:"stripQuery,omitempty"`
	// StripTrailingSlash drops one trailing "/" from a request's path
	// when it has no query, as ingress-nginx's redirects do: "/" then
	// becomes no path at all (http://example.com). Path is then empty.
	StripTrailingSlash bool `json:"stripTrailingSlash,omitempty"`
	// ListenerPort writes the port of the listener that took the request
	// into the URL, always (ingress-nginx's $server_port). Port is then 0.
	ListenerPort bool `json:"listenerPort,omitempty"`
	// PathRegex, when set, makes the path from the request's by an RE2
	// substitution over the whole path (without its query). Path is then
	// empty.
	PathRegex *RegexRewrite `json:"pathRegex,omitempty"`
	// Location, when set, is the whole Location sent, as it is: an http or
	// https URL, or an absolute path. Every other field but Code is then
	// empty.
	Location string `json:"location,omitempty"`
	// Relative sends the Location without the scheme and host: the path
	// the other fields make, and the query where they keep it (nginx's
	// absolute_redirect off). A fixed path without the query is Location
	// instead. Scheme, Host, Port, ListenerPort and StripTrailingSlash are
	// then unset.
	Relative bool `json:"relative,omitempty"`
	// Code is 301, 302, 303, 307 or 308.
	Code uint32 `json:"code"`
}

// DirectResponse is a fixed reply from Envoy itself.
type DirectResponse struct {
	Status uint32 `json:"status"`
	Body   string `json:"body,omitempty"`
	// ContentType is the body's media type; empty: Envoy's (text/plain).
	ContentType string `json:"contentType,omitempty"`
}

// Endpoint is one ready address of a Backend.
type Endpoint struct {
	Address string `json:"address"`
	Port    int32  `json:"port"`
}

// Backend is one port of one Service: its ready endpoints, which every
// cluster sending to it shares (one load assignment).
type Backend struct {
	// Name is namespace/service/port, the load assignment's name.
	Name    string               `json:"name"`
	Service types.NamespacedName `json:"service"`
	// Port is the Service port; PortName its name, which selects the
	// EndpointSlice ports.
	Port     int32  `json:"port"`
	PortName string `json:"portName,omitempty"`
	// Endpoints are sorted and unique.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// ExternalName, when set, is the DNS name of an ExternalName Service:
	// Envoy resolves it itself and Endpoints is empty.
	ExternalName string `json:"externalName,omitempty"`
}

// Cluster is one Envoy cluster: a Backend with a policy. Clusters that
// differ only in policy send to the same Backend.
type Cluster struct {
	// Name is ClusterName(Backend, Policy).
	Name    string         `json:"name"`
	Backend string         `json:"backend"`
	Policy  *ClusterPolicy `json:"policy,omitempty"`
	// Aggregate, when set, makes this an aggregate cluster (aggregate.go):
	// it sends to these clusters by priority, the first with a ready
	// endpoint taking the request. The first sends to Backend; Policy is
	// nil and Name is AggregateClusterName(Backend, Aggregate).
	Aggregate []string `json:"aggregate,omitempty"`
}

// PEM is PEM-encoded data, shown as text in JSON.
type PEM []byte

// MarshalText shows the PEM as it is.
func (p PEM) MarshalText() ([]byte, error) { return p, nil }

// UnmarshalText reads PEM text.
func (p *PEM) UnmarshalText(b []byte) error { *p = append(PEM(nil), b...); return nil }

// Certificate is a validated TLS certificate and key.
type Certificate struct {
	// Name is namespace/secret.
	Name   string               `json:"name"`
	Secret types.NamespacedName `json:"secret"`
	Chain  PEM                  `json:"chain"`
	Key    PEM                  `json:"key"`
}

// Problem is something wrong with an object, to be reported on it.
type Problem struct {
	Kind      string `json:"kind"` // e.g. "Ingress"
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"` // CamelCase, as in a Kubernetes Event
	Message   string `json:"message"`
}

// SameEndpoints says whether two endpoint lists are the same value, by
// identity (the IR contract: an unchanged list is handed out again, a
// changed one is new), without comparing their elements.
func SameEndpoints(a, b []Endpoint) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

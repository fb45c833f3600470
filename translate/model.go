// Package translate turns a kube.State into Envoy resources. It is pure: no
// clients, no goroutines, no clocks, and the same input always gives the same
// output, byte for byte.
//
// It works in two steps. The first (fragment.go, hosts.go, memo.go) applies
// Ingress semantics (classes are already decided by kube) and produces a
// Model: virtual hosts, routes and backends in our own small vocabulary,
// plus the problems found on the way. The second (envoy*.go) renders that
// Model as Envoy protos. Keeping the steps apart keeps Kubernetes rules out
// of the proto code and proto details out of the Kubernetes rules. Both
// steps remember their previous work (Translator), without ever letting that
// show in the output.
package translate

import "k8s.io/apimachinery/pkg/types"

// PathType is how a Route matches the request path.
type PathType string

const (
	// PathExact matches the path exactly (case-sensitive, query ignored).
	PathExact PathType = "Exact"
	// PathPrefix matches by whole path segments: /foo matches /foo, /foo/
	// and /foo/bar, but not /foobar.
	PathPrefix PathType = "Prefix"
)

// WildcardHost is the virtual host for rules without a host and for
// spec.defaultBackend.
const WildcardHost = "*"

// Model is the translator's intermediate form: what should be routed where,
// with no Envoy detail yet.
type Model struct {
	// VirtualHosts are sorted by Host.
	VirtualHosts []*VirtualHost
	// Backends are sorted by Name and are exactly those referenced by routes.
	Backends []*Backend
	// Certificates are the valid TLS Secrets used by virtual hosts, sorted by
	// Name.
	Certificates []*Certificate
	// Problems found while building; sorted by object, then message.
	Problems []Problem
}

// VirtualHost is every route for one host, merged from all Ingresses.
type VirtualHost struct {
	Host   string
	Routes []*Route // in match order: Exact first, then longest Prefix first
	// Certificate names the Certificate served for this host over HTTPS, or
	// is empty when the host is served over plain HTTP only.
	Certificate string
}

// Route sends requests matching a path to a backend, or answers directly
// when the backend cannot be used.
type Route struct {
	PathType PathType
	Path     string // for Prefix, without a trailing slash ("/" stays "/")

	// Backend is the name of the Backend to send to. Empty when Direct is set.
	Backend string
	// Direct, when non-nil, is the fixed response given instead.
	Direct *DirectResponse
	// RedirectToHTTPS makes the plain-HTTP listener answer this route with a
	// 301 to the same URL over HTTPS (force-ssl-redirect).
	RedirectToHTTPS bool

	// Ingress is the object the route came from.
	Ingress types.NamespacedName
}

// DirectResponse is a fixed reply from Envoy itself.
type DirectResponse struct {
	Status uint32
	Body   string
}

// Backend is one port of one Service: one Envoy cluster.
type Backend struct {
	Name      string // namespace/service/port, unique
	Service   types.NamespacedName
	Port      int32 // the Service port
	Endpoints []Endpoint
	// ExternalName, when set, is the DNS name of an ExternalName Service:
	// Envoy resolves it itself and Endpoints is empty.
	ExternalName string

	portName string // the Service port's name, which selects EndpointSlice ports
}

// Certificate is a validated TLS certificate and key from a Secret.
type Certificate struct {
	Name   string // namespace/secret, unique
	Secret types.NamespacedName
	Chain  []byte // PEM
	Key    []byte // PEM
}

// Endpoint is one ready address of a Backend.
type Endpoint struct {
	Address string
	Port    int32
}

// Problem is something wrong with an object, to be reported on it.
type Problem struct {
	Kind      string `json:"kind"` // e.g. "Ingress"
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"` // CamelCase, as in a Kubernetes Event
	Message   string `json:"message"`
}

// Package ingress is the Ingress front-end: it turns the Kubernetes objects
// of a kube.State (Ingresses, their annotations, the Services, EndpointSlices
// and Secrets they name) into the IR, applying the Ingress rules: host and
// path matching, merging of Ingresses that share a host, conflicts (the
// oldest Ingress wins), TLS, and the annotations of the registry in
// annotations/. Classes are already decided in kube.
//
// It is pure, and remembers its previous work (memo.go) without ever
// letting that show in its output.
package ingress

import (
	"cmp"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Names of the listeners the front-end makes.
const (
	HTTPListenerName  = "ingress_http"
	HTTPSListenerName = "ingress_https"
)

// Options are the settings that do not come from the cluster.
type Options struct {
	// HTTPPort is the port of the plain HTTP listener.
	HTTPPort uint32
	// HTTPSPort is the port of the TLS listener, present when some host has
	// a valid certificate; 0 disables TLS.
	HTTPSPort uint32
	// EnableExternalName allows ExternalName Services as backends.
	EnableExternalName bool
	// ResolveNames says that the control plane resolves names and checks
	// their addresses (kube.ResolvingSource, with MirrorNames): a mirror
	// target is then sent to at its checked addresses only, and not before
	// they are known (mirror.go).
	ResolveNames bool
	// ListenAddress is the address the listeners bind; 0.0.0.0 when
	// empty. :: takes IPv4 and IPv6 clients on one socket, unless the
	// ConfigMap's disable-ipv6 makes it 0.0.0.0.
	ListenAddress string
	// AnnotationsPrefix is the prefix ingress-nginx's annotations are read
	// under (its --annotations-prefix); annotations.NginxPrefix when empty.
	AnnotationsPrefix string
	// AllowedResponseHeaders are the header names custom-headers may set
	// (ingress-nginx's global-allowed-response-headers; none by default).
	AllowedResponseHeaders []string
	// EnableSSLPassthrough honours ssl-passthrough (serve
	// --enable-ssl-passthrough, as ingress-nginx's flag).
	EnableSSLPassthrough bool
	// AuthzAddress is where Envoy calls the authorisation service beside
	// it (an ip:port; envoy.DefaultAuthzAddress when empty). The renderer
	// uses it, not the front-end.
	AuthzAddress string
	// VirtualHostDiscovery sends the plain-HTTP virtual hosts over VHDS,
	// each a resource of its own, for Envoys on delta xDS (serve --vhds;
	// translate/envoy/vhds.go). The renderer uses it, not the front-end.
	VirtualHostDiscovery bool
	// DeltaVirtualHostDiscovery sends the plain-HTTP virtual hosts over
	// VHDS to Envoys on delta xDS alone while there are no route scopes,
	// SotW Envoys getting them in the route configuration (serve
	// --delta-vhds, its default; translate/envoy/vhds_delta.go). The
	// renderer uses it, not the front-end.
	DeltaVirtualHostDiscovery bool
	// OnDemandClusters has each Envoy, on delta xDS, fetch a route's
	// cluster when a request first needs it rather than hold every
	// cluster (serve --on-demand-clusters; translate/envoy/ondemand.go).
	// The renderer uses it, not the front-end.
	OnDemandClusters bool
	// RouteScopes, above 0, splits the plain-HTTP route configuration
	// into that many, by a hash of each host's name, for Envoys on either
	// protocol (serve --route-scopes; translate/envoy/scopes.go). The
	// renderer uses it, not the front-end.
	RouteScopes int
	// AutoRouteScopes, with RouteScopes 0, sizes the route scopes to the
	// number of hosts (serve --route-scopes auto, its default;
	// translate/envoy/scopes_auto.go). The renderer uses it.
	AutoRouteScopes bool
	// IgnoreRefusals serves an Ingress that carries an access control
	// ingress-xds cannot apply without it, where it is otherwise refused
	// (serve --unsupported-annotations=ignore; refuse.go).
	IgnoreRefusals bool
	// TrustedForwardedHops is how many proxies in front of Envoy append
	// the client's address to X-Forwarded-For and are trusted to (serve
	// --trusted-forwarded-hops): the client address IP rules and rate
	// limits see. 0, the default: the connection's peer.
	TrustedForwardedHops uint32
	// EscapedSlashes is what the listeners do with a path holding %2F
	// (serve --escaped-slashes); empty: redirect to the decoded path.
	EscapedSlashes ir.EscapedSlashes
	// ConfigMap is ingress-nginx's controller ConfigMap (serve
	// --configmap; empty: none). Its keys, read through the ConfigMap
	// table (translate/ingress/configmap), are every Ingress's defaults
	// (controllerconfig.go). It comes from the State, which holds it as an
	// object every Ingress refers to (WithConfigMap).
	ConfigMap types.NamespacedName

	// RequestMetrics has each Envoy send every request's figures to the
	// authorisation service beside it, which counts them as
	// ingress-nginx's request metrics (serve --request-metrics): the
	// routes then carry their Ingress's names (RouteLog).
	RequestMetrics bool

	// GatewayControllerName is the GatewayClass controllerName whose
	// Gateways the Gateway API front-end serves (serve
	// --gateway-controller-name; gatewayapi.DefaultControllerName when
	// empty). translate uses it, not the front-end.
	GatewayControllerName string
	// GatewayOwnAddresses gives each Gateway an address and Envoy ports
	// of its own (gatewayapi.Options.OwnAddresses).
	GatewayOwnAddresses bool

	// NginxDefaults gives every Ingress ingress-nginx's defaults where
	// they differ from Envoy's (serve --nginx-defaults;
	// configmap.NginxDefaults), under the ConfigMap's keys.
	NginxDefaults bool

	// config is that ConfigMap parsed, set by each build.
	config *controllerConfig
	// defaultPolicy is the route policy of an Ingress that sets nothing
	// (ingress-nginx's default retries alone), one value a Builder that
	// all such Ingresses share and none changes (the front-end copies a
	// policy before changing it); set by each build.
	defaultPolicy *ir.RoutePolicy
}

// nginxLocalReplyCodes are nginx's statuses where Envoy answers 503 when a
// backend cannot be reached: 502 when the connection to the endpoint fails
// (refused, reset or closed before a response, its certificate failing
// proxy-ssl-verify: nginx's NGX_HTTP_UPSTREAM_FT_ERROR), 504 when
// connecting times out (proxy-connect-timeout: NGX_HTTP_UPSTREAM_FT_TIMEOUT).
// A Service without endpoints keeps its 503, which ingress-nginx's Lua
// balancer answers too.
func nginxLocalReplyCodes() *ir.LocalReplyCodes {
	return &ir.LocalReplyCodes{UpstreamFailure: 502, ConnectTimeout: 504}
}

// Builder builds the IR of state after state, redoing only the work whose
// inputs changed. Its results are always what a new Builder would give for
// the same state. It is not safe for concurrent use.
type Builder struct {
	opts Options
	memo *memo
	http *ir.Listener
	tls  *ir.Listener
	// httpConfigured and tlsConfigured are http and tls with what the
	// controller ConfigMap sets of them, while it sets something.
	httpConfigured, tlsConfigured *ir.Listener
}

// NewBuilder returns a Builder with nothing remembered yet.
func NewBuilder(opts Options) *Builder {
	address := cmp.Or(opts.ListenAddress, "0.0.0.0")
	b := &Builder{
		opts: opts,
		memo: newMemo(annotations.New(opts.AnnotationsPrefix)),
		http: &ir.Listener{Name: HTTPListenerName, Address: address, Port: opts.HTTPPort, Protocol: ir.HTTP, TrustedHops: opts.TrustedForwardedHops, EscapedSlashes: opts.EscapedSlashes, RequestMetrics: opts.RequestMetrics},
	}
	if opts.HTTPSPort != 0 {
		b.tls = &ir.Listener{Name: HTTPSListenerName, Address: address, Port: opts.HTTPSPort, Protocol: ir.HTTPS, TrustedHops: opts.TrustedForwardedHops, EscapedSlashes: opts.EscapedSlashes, RequestMetrics: opts.RequestMetrics}
	}
	// What the backend is told of the client and the request is
	// ingress-nginx's without a ConfigMap too: a client must not choose
	// the X-Forwarded-* headers the backend reads. A lost backend is
	// answered with nginx's codes.
	for _, l := range []*ir.Listener{b.http, b.tls} {
		if l != nil {
			d := configmap.DefaultDownstream(l.Protocol, l.TrustedHops != 0)
			l.Downstream = &d
			l.LocalReplyCodes = nginxLocalReplyCodes()
		}
	}
	return b
}

// Build returns the IR of a state.
func (b *Builder) Build(st *kube.State) *ir.IR {
	out := b.memo.buildModel(st, b.opts)
	out.Listeners = []*ir.Listener{b.configured(b.http, &b.httpConfigured)}
	out.Upstream = b.memo.config.upstream() // connections.go
	// The HTTPS listener is there when some host has a certificate.
	if b.tls != nil && (len(out.Certificates) > 0 || b.opts.EnableSSLPassthrough && anyPassthrough(out.VirtualHosts)) {
		out.Listeners = append(out.Listeners, b.configured(b.tls, &b.tlsConfigured))
		slices.SortFunc(out.Listeners, func(a, c *ir.Listener) int { return cmp.Compare(a.Port, c.Port) })
	}
	return out
}

// configured is listener l with what the controller ConfigMap sets of
// listeners: HSTS on HTTPS, and use-forwarded-headers' trusted hop where
// serve --trusted-forwarded-hops says none. The same value (in *last)
// while that does not change.
func (b *Builder) configured(l *ir.Listener, last **ir.Listener) *ir.Listener {
	want := *l
	if l.Protocol == ir.HTTPS {
		want.HSTS = b.memo.config.hsts()
	}
	// The ConfigMap's block-user-agents and block-referers (block.go).
	want.Block = b.memo.config.block()
	want.ResponseHeaders = b.memo.config.addHeaders() // add-headers
	want.Brotli = b.memo.config.brotli()              // enable-brotli

	want.Tracing = b.memo.config.tracing() // tracing.go
	if b.memo.config.disableIPv6() && want.Address == netip.IPv6Unspecified().String() {
		want.Address = netip.IPv4Unspecified().String()
	}
	if want.TrustedHops == 0 {
		want.TrustedHops = b.memo.config.trustedHops()
	}
	if d := b.memo.config.downstream(l.Protocol, l.TrustedHops != 0); d != nil { // connections.go
		want.Downstream = d
	}
	if want == *l {
		return l
	}
	if *last == nil || **last != want {
		*last = &want
	}
	return *last
}

// RefreshEndpoints returns a backend's ready endpoints from its Service's
// current EndpointSlices, outside a build (the endpoint fast path), and
// remembers them so that the next Build reuses them: the same list, by
// identity, when they did not change.
func (b *Builder) RefreshEndpoints(be *ir.Backend, slices []*kube.EndpointSlice) []ir.Endpoint {
	return b.memo.refreshEndpoints(be, slices)
}

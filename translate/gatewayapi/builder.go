// Package gatewayapi is the Gateway API front-end: it turns the Gateway API
// objects of a kube.State (GatewayClasses whose controllerName is ours,
// their Gateways' HTTP, HTTPS and TLS (Passthrough) listeners, the
// HTTPRoutes, GRPCRoutes and TLSRoutes attached to them and the
// ReferenceGrants that allow references across namespaces),
// with the Services, EndpointSlices and Secrets they name, into the same
// IR the Ingress front-end produces, for the same renderer.
//
// It applies Gateway API's rules, never ingress-nginx's: hostnames
// intersect with their listener's, paths match as the specification says
// (a PathPrefix matches whole segments), rules are ordered by the
// specification's precedence across every Route of a host, and a Route's
// problem (an unresolved backend, a reference to another namespace that
// no ReferenceGrant allows, a filter we cannot apply) is answered in that
// Route's rules alone and reported on it, never felt by another Route.
//
// It is pure: no clients, no clocks, the same output for the same State.
// A Builder remembers its last build: it hands out again what did not
// change (memo.go), and a change of HTTPRoutes alone edits that build,
// touching only the hosts the changed Routes serve (incremental.go); the
// result always equals a fresh build's.
package gatewayapi

import (
	"cmp"
	"reflect"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// DefaultControllerName is the GatewayClass controllerName ingress-xds
// serves when Options.ControllerName is empty.
const DefaultControllerName = "ingress-xds.io/gateway-controller"

// Names of the listeners the front-end makes.
const (
	HTTPListenerName  = "gateway_http"
	HTTPSListenerName = "gateway_https"
)

// Options are the settings that do not come from the cluster.
type Options struct {
	// ControllerName is the GatewayClass controllerName whose Gateways
	// are ours; DefaultControllerName when empty.
	ControllerName string
	// HTTPPort and HTTPSPort are the ports Envoy listens on for plain
	// HTTP and for TLS (0: none). Envoy runs as a DaemonSet on fixed
	// ports, so a Gateway listener is programmed only when its port is
	// the one Envoy listens on for its protocol (gateways.go).
	HTTPPort, HTTPSPort uint32
	// PublishedHTTPPort and PublishedHTTPSPort are the ports clients reach
	// those listeners on when they are other ports (0: none): the
	// DaemonSet's host ports, 80 and 443 in deploy/, where Envoy binds
	// 8080 and 8443. A Gateway listener may name either, so that a
	// Gateway written for port 80 is served as users expect.
	PublishedHTTPPort, PublishedHTTPSPort uint32
	// ListenAddress is the address the listeners bind; 0.0.0.0 when
	// empty.
	ListenAddress string
	// HTTPListener and HTTPSListener name the listeners; HTTPListenerName
	// and HTTPSListenerName when empty. Beside the Ingress front-end they
	// are its names: a port is one Envoy listener, whichever front-end
	// asks for it first, and the IR's listeners are sorted by name and by
	// port alike.
	HTTPListener, HTTPSListener string
	// OwnAddresses gives each of our Gateways an address of its own:
	// each of its listener ports is an Envoy listener of its own, serving
	// its hosts alone, on a port of OwnPorts (own.go), which kube puts
	// behind a Service per Gateway; no Gateway is served on HTTPPort and
	// HTTPSPort then.
	OwnAddresses bool
	// OwnPortFirst and OwnPortCount are the range own listeners' Envoy
	// ports are chosen from; DefaultOwnPortFirst and DefaultOwnPortCount
	// when 0.
	OwnPortFirst, OwnPortCount uint32
}

func (o Options) controllerName() string { return cmp.Or(o.ControllerName, DefaultControllerName) }

// Build returns the IR of the Gateway API objects of a State: an IR with
// no listener and no host when the State holds none of ours.
func Build(st *kube.State, opts Options) *ir.IR {
	m, _ := BuildWithStatus(st, opts)
	return m
}

// BuildWithStatus is Build with the status of each of our Gateways and of
// each HTTPRoute attached to one, as the specification says (status.go).
func BuildWithStatus(st *kube.State, opts Options) (*ir.IR, *Status) {
	m, status, _ := buildAfter(st, opts, nil)
	return m, status
}

// buildAfter builds, handing out again what prev (a previous build's)
// made where nothing changed, and returns the build, which a change of
// HTTPRoutes alone may edit (incremental.go).
func buildAfter(st *kube.State, opts Options, prev *made) (*ir.IR, *Status, *build) {
	b := newBuild(st, opts)
	b.prev = prev
	b.backendPolicies() // backendtls.go
	b.gateways()
	b.routes()
	m, status := b.model(), b.status()
	b.prev = nil // what this build made is its own memo now
	return m, status, b
}

// Builder builds the IR of state after state. While nothing it reads
// changed (the Gateway API objects, Services, EndpointSlices, Secrets,
// ConfigMaps:
// each the very same list or map, as kube.State promises of an unchanged
// part) it hands out the very same IR, so that the renderer reuses all of
// its work: an Ingress change costs the Gateway API front-end nothing.
// A change of HTTPRoutes alone edits the last build, touching only the
// hosts the changed Routes served or serve (incremental.go); any other
// change builds anew, handing out again what did not change (memo.go).
// It is not safe for concurrent use.
type Builder struct {
	opts   Options
	last   *ir.IR
	status *Status
	live   *build     // the last build, with what it made (memo.go)
	read   kube.State // the parts of the State last read
	edits  int        // the builds made by editing the last one
}

// NewBuilder returns a Builder with nothing remembered yet.
func NewBuilder(opts Options) *Builder { return &Builder{opts: opts} }

// Build returns the IR of a state, the previous one when nothing it reads
// changed.
func (b *Builder) Build(st *kube.State) *ir.IR {
	if b.last != nil && st.Gateway == b.read.Gateway && same(st.Services, b.read.Services) &&
		same(st.EndpointSlices, b.read.EndpointSlices) && same(st.Secrets, b.read.Secrets) && same(st.ConfigMaps, b.read.ConfigMaps) {
		return b.last
	}
	if b.live != nil && onlyHTTPRoutes(st, b.read) {
		if m, status, ok := b.live.changeRoutes(st, b.last, b.status); ok {
			b.last, b.status, b.read.Gateway = m, status, st.Gateway
			b.edits++
			return b.last
		}
	}
	var prev *made
	if b.live != nil {
		prev = b.live.made
	}
	b.last, b.status, b.live = buildAfter(st, b.opts, prev)
	b.read = kube.State{Gateway: st.Gateway, Services: st.Services, EndpointSlices: st.EndpointSlices, Secrets: st.Secrets, ConfigMaps: st.ConfigMaps}
	return b.last
}

// Status is the status of the last Build's objects (nil before one): the
// same value while the IR is.
func (b *Builder) Status() *Status { return b.status }

// same says whether a and b are the very same map.
func same[K comparable, V any](a, b map[K]V) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

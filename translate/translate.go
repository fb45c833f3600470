// Package translate turns a kube.State into Envoy resources. It is the small
// entry point over three packages, in the one direction data flows:
//
//	kube.State -> ingress (the Ingress front-end) -> ir -> envoy (the renderer)
//	          \-> gatewayapi (the Gateway API front-end) -/ (merge.go)
//
// translate/ingress applies Ingress semantics and the annotations of its
// registry and produces the IR; translate/ir is that intermediate
// representation and its contract; translate/envoy renders the IR as Envoy
// protos. All are pure: no clients, no goroutines, no clocks, and the same
// input always gives the same output, byte for byte. Both steps remember
// their previous work (Translator) without ever letting that show.
package translate

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/gatewayapi"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The types consumers use, from the packages that define them.
type (
	// Options are the settings that do not come from the cluster.
	Options = ingress.Options
	// Resources are the Envoy resources of one translation.
	Resources = envoy.Resources
	// OnDemand says which clusters an Envoy fetches when a request needs
	// one (translate/envoy/ondemand.go).
	OnDemand = envoy.OnDemand
	// Problem is something wrong with an object, to be reported on it.
	Problem = ir.Problem
)

// Result is everything one translation produces.
type Result struct {
	Resources *Resources
	Problems  []Problem
	// base is the IR of the last full translation, and replaced the
	// backends of it the endpoint fast path replaced since, by index: the
	// fast path need not copy a list of every backend per change.
	base     *ir.IR
	replaced map[int]*ir.Backend
	// GatewayStatus is the Gateway API front-end's status of the objects
	// translated (gatewayapi.Builder.Status): what the leader is to
	// write. Nil when the State holds no Gateway API object (none is
	// ours, so nothing of ours is to be written); the very same value
	// while the front-end's output is.
	GatewayStatus *gatewayapi.Status
	// Invalid is what ir.(*IR).Validate found wrong with the IR, when the
	// Translator checks it (SetValidate); nil otherwise. The resources
	// are rendered all the same: a broken contract is a bug of ours to
	// report, not a reason to stop serving.
	Invalid error
}

// IR is what the resources were rendered from, made on demand; it must not
// be modified.
func (r *Result) IR() *ir.IR {
	if len(r.replaced) == 0 {
		return r.base
	}
	m := *r.base
	m.Backends = slices.Clone(m.Backends)
	for i, be := range r.replaced {
		m.Backends[i] = be
	}
	return &m
}

// maxReplaced bounds the backends a Result lists apart from its base IR:
// past it, the fast path makes the IR they stand in anew, once, so that
// each change copies a short list.
const maxReplaced = 256

// Translate runs both steps: Ingress semantics, then Envoy rendering.
func Translate(st *kube.State, opts Options) (*Result, error) {
	return NewTranslator(opts).Translate(st)
}

// RenderJSON prints a Result as indented JSON grouped by resource type: the
// output of `ingress-xds translate -f` and the format of its golden files.
func RenderJSON(r *Result) ([]byte, error) {
	return envoy.RenderJSON(r.Resources, r.Problems)
}

// Translator translates state after state, redoing only the work whose
// inputs changed: an Ingress, a Service, an EndpointSlice or a Secret. Its
// results are always identical to Translate's on the same state. It is not
// safe for concurrent use.
type Translator struct {
	front  *ingress.Builder
	render *envoy.Renderer
	// gateway is the Gateway API front-end, made when a State first holds
	// Gateway API objects.
	gateway *gatewayapi.Builder
	opts    Options

	// The previous result and the positions of its IR's backends that
	// have no load assignment (ExternalName ones, and those only
	// service-upstream clusters send to), for the endpoint fast path; the
	// positions are found on the first fast-path change after a full
	// translation.
	last      *Result
	externals []int
	// validate runs the IR's Validate on every full translation.
	validate bool
}

// loadSlot locates a Service's first backend. A Service's backends are
// adjacent: backends are sorted by name, and their names start with
// namespace/service/.
type loadSlot struct {
	backend  int // index in last's IR's Backends
	resource int // index in last.Resources.Endpoints
}

// NewTranslator returns a Translator with nothing remembered yet.
func NewTranslator(opts Options) *Translator {
	return &Translator{front: ingress.NewBuilder(opts), opts: opts, render: envoy.NewRendererWith(envoy.Options{AuthzAddress: opts.AuthzAddress, VirtualHostDiscovery: opts.VirtualHostDiscovery, OnDemandClusters: opts.OnDemandClusters, RouteScopes: opts.RouteScopes, AutoRouteScopes: opts.AutoRouteScopes, DeltaVirtualHostDiscovery: opts.DeltaVirtualHostDiscovery})}
}

// SetValidate makes every full translation check the IR it builds against
// the IR's contract (ir.(*IR).Validate) and report what it finds in
// Result.Invalid. At 10,000 Ingresses that is a large part of an Ingress
// change's whole latency (docs/benchmarks.md, "Validate on the serving
// path"), so serve runs it behind --validate-ir; the tests and the load
// command turn it on. The endpoint fast path (UpdateEndpoints) does
// not check: it replaces backends' endpoints only.
func (t *Translator) SetValidate(on bool) { t.validate = on }

// Translate translates one state.
func (t *Translator) Translate(st *kube.State) (*Result, error) {
	gw := t.gatewayAPI(st)
	var gwStatus *gatewayapi.Status
	if gw != nil {
		gwStatus = t.gateway.Status()
	}
	m := merge(t.front.Build(st), gw)
	var invalid error
	if t.validate {
		invalid = m.Validate()
	}
	res, err := t.render.Render(m)
	if err != nil {
		t.last, t.externals = nil, nil
		return nil, fmt.Errorf("rendering envoy resources: %w", err)
	}
	t.last, t.externals = &Result{Resources: res, Problems: m.Problems, base: m, GatewayStatus: gwStatus, Invalid: invalid}, nil
	return t.last, nil
}

// gatewayAPI is the Gateway API front-end's IR of a State, on Envoy's
// ports; nil when the State holds no Gateway API object.
func (t *Translator) gatewayAPI(st *kube.State) *ir.IR {
	if st.Gateway.Empty() {
		return nil
	}
	if t.gateway == nil {
		t.gateway = gatewayapi.NewBuilder(gatewayapi.Options{ControllerName: t.opts.GatewayControllerName, HTTPPort: t.opts.HTTPPort, HTTPSPort: t.opts.HTTPSPort, ListenAddress: t.opts.ListenAddress,
			PublishedHTTPPort: configmap.ForwardedHTTPPort, PublishedHTTPSPort: configmap.ForwardedHTTPSPort,
			HTTPListener: ingress.HTTPListenerName, HTTPSListener: ingress.HTTPSListenerName,
			OwnAddresses: t.opts.GatewayOwnAddresses})
	}
	return t.gateway.Build(st)
}

// firstLoad locates a Service's first backend in the previous IR, by
// binary search: backend names start with namespace/service/ and are
// sorted (a map of every Service would cost more memory than the rest of
// the fast path).
func (t *Translator) firstLoad(svc types.NamespacedName) (loadSlot, bool) {
	backends := t.last.base.Backends // positions and names; the fast path changes only endpoints
	if t.externals == nil {
		t.externals = noLoadAssignment(t.last.base)
	}
	prefix := svc.Namespace + "/" + svc.Name + "/"
	i := sort.Search(len(backends), func(i int) bool { return backends[i].Name >= prefix })
	if i == len(backends) || backends[i].Service != svc {
		return loadSlot{}, false
	}
	// Every backend before it has a load assignment, but those listed.
	return loadSlot{backend: i, resource: i - sort.SearchInts(t.externals, i)}, true
}

// noLoadAssignment lists, in order, the positions of the backends without
// a load assignment: ExternalName ones, and those no cluster sends to the
// endpoints of (service-upstream). A backend's clusters are adjacent and in
// backend order (the IR's contract), so one walk of both lists finds them.
func noLoadAssignment(m *ir.IR) []int {
	out := []int{}
	c := 0
	for i, be := range m.Backends {
		eds := false
		for ; c < len(m.Clusters) && m.Clusters[c].Backend == be.Name; c++ {
			eds = eds || m.Clusters[c].UsesEndpoints()
		}
		if be.ExternalName != "" || !eds {
			out = append(out, i)
		}
	}
	return out
}

// UpdateEndpoints is the endpoint fast path. When only the EndpointSlices of
// some Services changed since the previous Translate (slices holds their
// current EndpointSlices, in State order), only those Services' load
// assignments can differ: they are recomputed and everything else is reused.
// The result equals a full Translate of the new state. It reports false when
// there is no previous result to build on.
func (t *Translator) UpdateEndpoints(slices map[types.NamespacedName][]*kube.EndpointSlice) (*Result, bool) {
	if t.last == nil {
		return nil, false
	}
	res := *t.last.Resources
	base, replaced := t.last.base, maps.Clone(t.last.replaced)
	if replaced == nil {
		replaced = map[int]*ir.Backend{}
	}
	copied := false
	for svc, current := range slices {
		first, ok := t.firstLoad(svc)
		if !ok {
			continue
		}
		r := first.resource
		for i := first.backend; i < len(base.Backends); i++ {
			old := base.Backends[i]
			if be, ok := replaced[i]; ok {
				old = be
			}
			if old.Service != svc {
				break
			}
			if old.ExternalName != "" {
				continue
			}
			k := sort.SearchInts(t.externals, i)
			noLoad := k < len(t.externals) && t.externals[k] == i
			resource := r
			if !noLoad {
				r++
			}
			be := *old
			be.Endpoints = t.front.RefreshEndpoints(&be, current)
			if ir.SameEndpoints(be.Endpoints, old.Endpoints) {
				continue
			}
			if !copied {
				// The previous resources are never modified: the new ones
				// get a list of their own.
				res.Endpoints = append(res.Endpoints[:0:0], res.Endpoints...)
				copied = true
			}
			replaced[i] = &be
			if !noLoad {
				res.Endpoints[resource] = t.render.LoadAssignment(&be)
			}
		}
	}
	next := &Result{Resources: &res, Problems: t.last.Problems, base: base, replaced: replaced, GatewayStatus: t.last.GatewayStatus}
	if len(replaced) > maxReplaced {
		next.base, next.replaced = next.IR(), nil
	}
	t.last = next
	return t.last, true
}

// Redacted replaces private key material wherever config is shown to people.
const Redacted = envoy.Redacted

// RedactSecrets returns copies of the secrets with private keys replaced, so
// that they can be printed or served for inspection.
func RedactSecrets(secrets []*tlsv3.Secret) []*tlsv3.Secret { return envoy.RedactSecrets(secrets) }

// RedactCluster returns a cluster safe to show: the private key of a client
// certificate written into it replaced. Other clusters are returned as
// they are.
func RedactCluster(c proto.Message) proto.Message { return envoy.RedactCluster(c) }

// RedactRoute returns a route configuration safe to show: basic
// authentication's user files (the Secret's password hashes) replaced.
func RedactRoute(r proto.Message) proto.Message { return envoy.RedactRoute(r) }

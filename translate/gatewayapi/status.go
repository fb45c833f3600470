package gatewayapi

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Status is the Gateway API status of each of our objects as a build
// serves them, keyed by namespace/name: what the leader writes (the
// pipeline hands it to kube.GatewayStatusWriter as kube.GatewayStatuses).
// Conditions carry the object's generation and no transition time, which
// is the writer's to keep or set; Gateways carry no addresses, which are
// the Envoys' and the writer's too.
type Status struct {
	Gateways   map[string]gwapiv1.GatewayStatus   `json:"gateways"`
	HTTPRoutes map[string]gwapiv1.HTTPRouteStatus `json:"httpRoutes"`
	GRPCRoutes map[string]gwapiv1.GRPCRouteStatus `json:"grpcRoutes"`
	TLSRoutes  map[string]gwapiv1.TLSRouteStatus  `json:"tlsRoutes"`
	// BackendTLSPolicies are the policies' ancestors of ours
	// (backendtls.go).
	BackendTLSPolicies map[string]gwapiv1.PolicyStatus `json:"backendTLSPolicies,omitempty"`
	// HTTPRoutesSince, after a change of HTTPRoutes alone
	// (incremental.go), is the last build's HTTPRoutes map, from which
	// this one was made, and HTTPRoutesChanged the HTTPRoutes whose
	// entries may differ from it: every other is the same. Nil after a
	// full build.
	HTTPRoutesSince   map[string]gwapiv1.HTTPRouteStatus `json:"-"`
	HTTPRoutesChanged []string                           `json:"-"`
	// OwnPorts are, with Options.OwnAddresses, each Gateway's listener
	// ports' Envoy ports (own.go), by namespace/name: what the Service
	// in front of the Gateway sends each port to.
	OwnPorts map[string]map[uint32]uint32 `json:"ownPorts,omitempty"`
}

// refError is an error with the status reason it stands for.
type refError struct {
	reason string
	err    error
}

func (e refError) Error() string { return e.err.Error() }
func (e refError) Unwrap() error { return e.err }

// reasonOf is err's reason, or def.
func reasonOf(err error, def string) string {
	var re refError
	if errors.As(err, &re) {
		return re.reason
	}
	return def
}

// listenerFacts are what a listener's status is made of.
type listenerFacts struct {
	// refused is why the listener is not accepted (PortUnavailable,
	// UnsupportedProtocol, UnsupportedValue), unresolved why its
	// references are not (InvalidCertificateRef, RefNotPermitted), each
	// with its message; conflicted, why it conflicts with another.
	refused, refusedMsg       string
	unresolved, unresolvedMsg string
	conflicted                string
	// conflictReason is the Conflicted condition's reason:
	// HostnameConflict when empty.
	conflictReason string
	kinds          []gwapiv1.RouteGroupKind
	badKinds       bool
	attached       map[string]bool // by routeObject.key
}

// setRefused files a listener's problem under the condition it belongs to.
func (f *listenerFacts) setRefused(reason, msg string) {
	switch gwapiv1.ListenerConditionReason(reason) {
	case gwapiv1.ListenerReasonInvalidCertificateRef, gwapiv1.ListenerReasonRefNotPermitted:
		f.unresolved, f.unresolvedMsg = reason, msg
	default:
		f.refused, f.refusedMsg = reason, msg
	}
}

// count attaches a Route to the listener.
func (f *listenerFacts) count(r *routeObject) {
	if f.attached == nil {
		f.attached = map[string]bool{}
	}
	f.attached[r.key()] = true
}

// routeKinds are the kinds a listener's Routes may be (of those its
// protocol serves, HTTPRoute and GRPCRoute on HTTP and HTTPS, TLSRoute on
// TLS, the ones allowedRoutes.kinds names), and whether it names one that
// is not served.
func routeKinds(p gwapiv1.ProtocolType, a *gwapiv1.AllowedRoutes) ([]gwapiv1.RouteGroupKind, bool) {
	group := gwapiv1.Group(gwapiv1.GroupName)
	served := []gwapiv1.RouteGroupKind{{Group: &group, Kind: kindHTTPRoute}, {Group: &group, Kind: kindGRPCRoute}}
	if p == gwapiv1.TLSProtocolType {
		served = []gwapiv1.RouteGroupKind{{Group: &group, Kind: kindTLSRoute}}
	}
	if a == nil || len(a.Kinds) == 0 {
		return served, false
	}
	var out []gwapiv1.RouteGroupKind
	bad := false
	for _, k := range a.Kinds {
		i := slices.IndexFunc(served, func(s gwapiv1.RouteGroupKind) bool { return s.Kind == k.Kind })
		if deref(k.Group, gwapiv1.GroupName) != gwapiv1.GroupName || i < 0 {
			bad = true
			continue
		}
		if !slices.ContainsFunc(out, func(o gwapiv1.RouteGroupKind) bool { return o.Kind == k.Kind }) {
			out = append(out, served[i])
		}
	}
	return out, bad
}

// parentOutcome is what became of one parentRef of a Route.
type parentOutcome struct {
	ref      gwapiv1.ParentReference
	accepted bool
	reason   string // why not, when not
	message  string
}

// routeFacts are what a Route's status is made of.
type routeFacts struct {
	route   *routeObject
	parents []parentOutcome
	// unresolved is the first reference that did not resolve.
	unresolved, unresolvedMsg string
}

func (b *build) routeFacts(r *routeObject) *routeFacts {
	key := r.key()
	f := b.routeStatus[key]
	if f == nil {
		f = &routeFacts{route: r}
		b.routeStatus[key] = f
	}
	return f
}

func (b *build) outcome(r *routeObject, o parentOutcome) {
	f := b.routeFacts(r)
	f.parents = append(f.parents, o)
}

func (b *build) unresolved(r *routeObject, reason, msg string) {
	if f := b.routeFacts(r); f.unresolved == "" {
		f.unresolved, f.unresolvedMsg = reason, msg
	}
}

func condition(t, reason, msg string, ok bool, generation int64) metav1.Condition {
	status := metav1.ConditionTrue
	if !ok {
		status = metav1.ConditionFalse
	}
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: generation}
}

// status is the build's Status.
func (b *build) status() *Status {
	out := &Status{Gateways: b.gatewayStatuses(), HTTPRoutes: map[string]gwapiv1.HTTPRouteStatus{}, GRPCRoutes: map[string]gwapiv1.GRPCRouteStatus{}, TLSRoutes: map[string]gwapiv1.TLSRouteStatus{}}
	for _, f := range b.routeStatus {
		b.routeStatusInto(out, f)
	}
	out.BackendTLSPolicies = b.policyStatus()
	out.OwnPorts = b.ownPortsByGateway()
	return out
}

// gatewayStatuses are our Gateways' statuses, by namespace/name.
func (b *build) gatewayStatuses() map[string]gwapiv1.GatewayStatus {
	out := map[string]gwapiv1.GatewayStatus{}
	for key, listeners := range b.byGateway {
		out[key.String()] = gatewayStatus(b.gatewayOf[key], listeners, b.backendCerts[key], b.refusedGateways[key])
	}
	return out
}

// routeStatusInto puts a Route's status in out, when it has a parentRef
// of ours.
func (b *build) routeStatusInto(out *Status, f *routeFacts) {
	if len(f.parents) == 0 {
		return
	}
	name := f.route.namespace + "/" + f.route.name
	switch f.route.kind {
	case kindHTTPRoute:
		out.HTTPRoutes[name] = gwapiv1.HTTPRouteStatus{RouteStatus: b.routeStatusOf(f)}
	case kindGRPCRoute:
		out.GRPCRoutes[name] = gwapiv1.GRPCRouteStatus{RouteStatus: b.routeStatusOf(f)}
	case kindTLSRoute:
		out.TLSRoutes[name] = gwapiv1.TLSRouteStatus{RouteStatus: b.routeStatusOf(f)}
	}
}

// conflictReasonOr is the listener's conflict reason, HostnameConflict
// unless another is set.
func (f *listenerFacts) conflictReasonOr() string {
	if f.conflictReason != "" {
		return f.conflictReason
	}
	return string(gwapiv1.ListenerReasonHostnameConflict)
}

// gatewayStatus is a Gateway's conditions and its listeners'. It is
// Accepted while some listener is (ListenersNotValid when some other is
// not) and its spec is not refused (the refusal's reason otherwise:
// UnsupportedAddress, InvalidParameters), and Programmed while some
// listener is served.
func gatewayStatus(gw *gwapiv1.Gateway, listeners []*listener, backendCert *gatewayBackendCert, refused gatewayRefusal) gwapiv1.GatewayStatus {
	gen := gw.Generation
	var out gwapiv1.GatewayStatus
	valid, programmed := 0, 0
	for _, l := range listeners {
		ls := gwapiv1.ListenerStatus{Name: gwapiv1.SectionName(l.name), SupportedKinds: l.status.kinds, AttachedRoutes: int32(len(l.status.attached))}
		if ls.SupportedKinds == nil {
			ls.SupportedKinds = []gwapiv1.RouteGroupKind{}
		}
		f := &l.status
		accepted := f.refused == "" && f.conflicted == ""
		if accepted {
			valid++
		}
		switch {
		case f.refused != "":
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionAccepted), f.refused, f.refusedMsg, false, gen))
		case f.conflicted != "":
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionAccepted), f.conflictReasonOr(), f.conflicted, false, gen))
		default:
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionAccepted), string(gwapiv1.ListenerReasonAccepted), "", true, gen))
		}
		if f.conflicted != "" {
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionConflicted), f.conflictReasonOr(), f.conflicted, true, gen))
		} else {
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionConflicted), string(gwapiv1.ListenerReasonNoConflicts), "", false, gen))
		}
		switch {
		case f.unresolved != "":
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionResolvedRefs), f.unresolved, f.unresolvedMsg, false, gen))
		case f.badKinds:
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionResolvedRefs), string(gwapiv1.ListenerReasonInvalidRouteKinds), "allowedRoutes.kinds names a kind that the listener's protocol does not serve", false, gen))
		default:
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionResolvedRefs), string(gwapiv1.ListenerReasonResolvedRefs), "", true, gen))
		}
		if l.programmed {
			programmed++
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionProgrammed), string(gwapiv1.ListenerReasonProgrammed), "", true, gen))
		} else {
			ls.Conditions = append(ls.Conditions, condition(string(gwapiv1.ListenerConditionProgrammed), string(gwapiv1.ListenerReasonInvalid), "not served", false, gen))
		}
		out.Listeners = append(out.Listeners, ls)
	}
	switch {
	case refused.reason != "":
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionAccepted), refused.reason, refused.msg, false, gen))
	case valid == len(listeners):
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionAccepted), string(gwapiv1.GatewayReasonAccepted), "", true, gen))
	default:
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionAccepted), string(gwapiv1.GatewayReasonListenersNotValid),
			fmt.Sprintf("%d of %d listeners are not valid", len(listeners)-valid, len(listeners)), valid > 0, gen))
	}
	if backendCert != nil {
		// backendcert.go: the Gateway's own reference (its listeners'
		// are theirs); written while it names one, taken off by the
		// status writer once it does not.
		ok := backendCert.reason == ""
		reason := cmp.Or(backendCert.reason, string(gwapiv1.GatewayReasonResolvedRefs))
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionResolvedRefs), reason, backendCert.msg, ok, gen))
	}
	if insecureFrontend(gw) {
		// frontendtls.go: written while some validation allows clients
		// without a valid certificate; the status writer takes it off
		// when none does any more.
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionInsecureFrontendValidationMode), string(gwapiv1.GatewayReasonConfigurationChanged),
			"tls.frontend allows clients without a valid certificate (AllowInsecureFallback)", true, gen))
	}
	if programmed > 0 {
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionProgrammed), string(gwapiv1.GatewayReasonProgrammed), "", true, gen))
	} else {
		out.Conditions = append(out.Conditions, condition(string(gwapiv1.GatewayConditionProgrammed), string(gwapiv1.GatewayReasonInvalid), "no listener is served", false, gen))
	}
	return out
}

// routeStatusOf is a Route's status per parentRef of ours: Accepted, or
// why not (NoMatchingParent, NotAllowedByListeners,
// NoMatchingListenerHostname), and ResolvedRefs, or the first reference
// that did not resolve.
func (b *build) routeStatusOf(f *routeFacts) gwapiv1.RouteStatus {
	gen := f.route.generation
	var out gwapiv1.RouteStatus
	for _, p := range f.parents {
		ps := gwapiv1.RouteParentStatus{ParentRef: p.ref, ControllerName: gwapiv1.GatewayController(b.opts.controllerName())}
		if p.accepted {
			ps.Conditions = append(ps.Conditions, condition(string(gwapiv1.RouteConditionAccepted), string(gwapiv1.RouteReasonAccepted), "", true, gen))
		} else {
			ps.Conditions = append(ps.Conditions, condition(string(gwapiv1.RouteConditionAccepted), p.reason, p.message, false, gen))
		}
		if f.unresolved != "" {
			ps.Conditions = append(ps.Conditions, condition(string(gwapiv1.RouteConditionResolvedRefs), f.unresolved, f.unresolvedMsg, false, gen))
		} else {
			ps.Conditions = append(ps.Conditions, condition(string(gwapiv1.RouteConditionResolvedRefs), string(gwapiv1.RouteReasonResolvedRefs), "", true, gen))
		}
		out.Parents = append(out.Parents, ps)
	}
	return out
}

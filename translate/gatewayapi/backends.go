package gatewayapi

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/endpoints"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// shares resolves a rule's backendRefs into weighted clusters of the
// given policy (nil: the default; HTTP/2 for gRPC), made for retries
// when the rule retries (retryingPolicy). invalid is
// the weight of the refs that cannot be resolved, each reported on the
// Route: Gateway API answers their share of requests 500.
func (b *build) shares(r *routeObject, rule int, refs []gwapiv1.HTTPBackendRef, policy *ir.ClusterPolicy, retried bool) (out []ir.WeightedCluster, invalid uint32) {
	for i, ref := range refs {
		weight := uint32(deref(ref.Weight, 1))
		where := fmt.Sprintf("rules[%d].backendRefs[%d]", rule, i)
		be, err := b.backend(r, ref.BackendObjectReference)
		var f applied
		if err == nil {
			f, err = shareFilters(ref.Filters)
		}
		var p *ir.ClusterPolicy
		if err == nil {
			// A backend whose BackendTLSPolicy cannot be applied is
			// answered 500, as the specification says, but its reference
			// resolved: the policy's status says what is wrong.
			if p, err = b.withBackendTLS(r, be, b.portPolicy(be, policy)); err != nil {
				b.problem(r, "BackendTLSPolicyInvalid", "%s: %v: its share is answered 500", where, err)
				invalid += weight
				continue
			}
		}
		if err != nil {
			// Reported under the reason Gateway API's ResolvedRefs uses.
			reason := reasonOf(err, string(gwapiv1.RouteReasonBackendNotFound))
			b.problem(r, reason, "%s: %v: its share is answered 500", where, err)
			b.unresolved(r, reason, fmt.Sprintf("%s: %v", where, err))
			invalid += weight
			continue
		}
		if weight == 0 {
			continue // no traffic, by the Route's own choice
		}
		if retried {
			p = retryingPolicy(p)
		}
		out = append(out, ir.WeightedCluster{Cluster: b.cluster(be, p), Weight: weight,
			RequestHeaders: f.requestHeaders, ResponseHeaders: f.responseHeaders})
	}
	return out, invalid
}

// shareFilters reads a backendRef's filters, which change the headers of
// the requests sent to that backend and of its responses. Another filter
// there is refused: the ref is reported (UnsupportedValue) and its share
// taken as an unresolved backend's.
func shareFilters(fs []gwapiv1.HTTPRouteFilter) (applied, error) {
	f, err := filters(fs)
	if err == nil && (f.redirect != nil || f.rewrite != nil || len(f.mirrors) > 0 || f.cors != nil) {
		err = fmt.Errorf("only RequestHeaderModifier and ResponseHeaderModifier are supported on a backendRef")
	}
	if err != nil {
		return f, refError{reason: string(gwapiv1.RouteReasonUnsupportedValue), err: err}
	}
	return f, nil
}

// maxParallelRetries bounds the retries in flight to one cluster of a
// rule that retries, per Envoy: as many as the requests Envoy lets in
// flight to a cluster by default (its max_requests), so that any request
// may be retrying. Envoy's own bound, 3, turns every retry past the
// third in flight into the failed try's answer: Gateway API's retry
// stanza bounds a request's attempts, not how many requests retry at
// once, and the conformance suite's HTTPRouteRetry sends eleven at once.
const maxParallelRetries = 1024

// retryingPolicy is p (nil: the default) with room for maxParallelRetries.
// It is a cluster of its own (ir.ClusterName hashes the policy), so the
// Service's other routes, an Ingress's among them, keep their clusters as
// they were.
func retryingPolicy(p *ir.ClusterPolicy) *ir.ClusterPolicy {
	out := ir.ClusterPolicy{}
	if p != nil {
		out = *p
	}
	cb := ir.CircuitBreakers{}
	if out.CircuitBreakers != nil {
		cb = *out.CircuitBreakers
	}
	cb.MaxRetries = maxParallelRetries
	out.CircuitBreakers = &cb
	return &out
}

// h2cAppProtocol is the Service port appProtocol Gateway API gives
// HTTP/2 over clear text (GEP-1911).
const h2cAppProtocol = "kubernetes.io/h2c"

// portPolicy is the policy of a backend's cluster: the Route's, or, where
// the Route leaves it to the backend (nil), HTTP/2 for a Service port
// whose appProtocol says h2c. (kubernetes.io/ws needs nothing: Envoy
// passes WebSocket upgrades to every backend.)
func (b *build) portPolicy(be *ir.Backend, policy *ir.ClusterPolicy) *ir.ClusterPolicy {
	if policy != nil {
		return policy
	}
	if p, ok := servicePort(b.st.Services[be.Service], be.Port); ok && p.AppProtocol == h2cAppProtocol {
		return &ir.ClusterPolicy{Protocol: ir.UpstreamHTTP2}
	}
	return nil
}

// backend resolves one backendRef to a Service port's backend, with its
// default cluster: a Service of the Route's namespace, or of another one a
// ReferenceGrant there opens to HTTPRoutes of the Route's.
func (b *build) backend(r *routeObject, ref gwapiv1.BackendObjectReference) (*ir.Backend, error) {
	if g, k := deref(ref.Group, ""), deref(ref.Kind, "Service"); g != "" || k != "Service" {
		return nil, refError{reason: string(gwapiv1.RouteReasonInvalidKind), err: fmt.Errorf("%s %s is not a Service", groupKind(g, k), ref.Name)}
	}
	name := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(r.namespace))), Name: string(ref.Name)}
	if name.Namespace != r.namespace && !b.granted(gwapiv1.GroupName, r.kind, r.namespace, "", "Service", name) {
		return nil, refError{reason: string(gwapiv1.RouteReasonRefNotPermitted), err: fmt.Errorf("Service %s is in another namespace and no ReferenceGrant there allows it", name)}
	}
	svc := b.st.Services[name]
	b.reading.service(name, svc)
	if svc == nil {
		return nil, fmt.Errorf("Service %s not found", name)
	}
	if ref.Port == nil {
		return nil, fmt.Errorf("Service %s: no port given", name)
	}
	if svc.Type == corev1.ServiceTypeExternalName {
		return nil, fmt.Errorf("Service %s is of type ExternalName, which is not supported yet", name)
	}
	port, ok := servicePort(svc, int32(*ref.Port))
	if !ok {
		return nil, fmt.Errorf("Service %s has no TCP port %d", name, *ref.Port)
	}
	// The Ingress front-end names a Service port's backend the same way,
	// so that the two front-ends' IRs share it.
	id := fmt.Sprintf("%s/%s/%d", name.Namespace, name.Name, port.Port)
	if be := b.backends[id]; be != nil {
		return be, nil
	}
	slices := b.st.EndpointSlices[name]
	be := b.prev.backend(id, port, slices)
	if be == nil {
		be = &ir.Backend{Name: id, Service: name, Port: port.Port, PortName: port.Name, Endpoints: endpoints.Ready(slices, port)}
	}
	b.backends[id] = be
	b.made.backends[id] = madeBackend{be: be, slices: slices}
	return be, nil
}

// cluster is the name of the cluster that sends to a backend with a
// policy, which the build then lists.
func (b *build) cluster(be *ir.Backend, policy *ir.ClusterPolicy) string {
	name := ir.ClusterName(be.Name, policy)
	if b.clusters[name] == nil {
		// The name is the backend's and its policy's hash: a cluster of
		// the name made before is this one.
		c := b.prev.cluster(name)
		if c == nil {
			if policy.IsDefault() {
				policy = nil
			}
			c = &ir.Cluster{Name: name, Backend: be.Name, Policy: policy}
		}
		b.clusters[name] = c
	}
	b.reading.cluster(b.clusters[name], be)
	return name
}

func servicePort(svc *kube.Service, number int32) (kube.ServicePort, bool) {
	if svc == nil {
		return kube.ServicePort{}, false
	}
	for _, p := range svc.Ports {
		if p.Port == number && (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) {
			return p, true
		}
	}
	return kube.ServicePort{}, false
}

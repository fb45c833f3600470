package gatewayapi

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// kindBackendTLSPolicy is BackendTLSPolicy's kind, for problems and status.
const kindBackendTLSPolicy = "BackendTLSPolicy"

// backendPolicy is one BackendTLSPolicy as a build reads it: how the
// Gateways reach the Service ports it targets over TLS (the SNI of
// validation.hostname, the CAs of its ConfigMaps, the names the
// certificate must carry), and its status.
//
// A policy applies to the clusters of Gateway API Routes alone: an
// Ingress says how its backends are reached by its own annotations
// (backend-protocol, proxy-ssl-*), and a Service port both use is then
// two clusters (ir.ClusterName hashes the policy), each as its front-end
// says. The specification leaves Services no Route names to the
// implementation (Implementation-specific support).
type backendPolicy struct {
	obj *gwapiv1.BackendTLSPolicy
	// tls is what the policy's clusters speak; nil when it cannot be
	// applied (no valid CA, a field not supported): the backends it
	// targets are then answered 500, never reached without the TLS asked
	// for.
	tls *ir.UpstreamTLS
	// refused is why the policy is not Accepted (Conflicted,
	// NoValidCACertificate, Invalid), unresolved why its references are
	// not (InvalidCACertificateRef, InvalidKind), each with its message.
	refused, refusedMsg       string
	unresolved, unresolvedMsg string
}

// policyTarget names a Service port a policy targets: section is the
// port's name, "" the whole Service.
type policyTarget struct {
	service types.NamespacedName
	section string
}

// backendPolicies reads every BackendTLSPolicy once per build: where two
// target the same Service port (or both the whole Service), the older
// wins (then the first by namespace/name) and the other is not Accepted
// (Conflicted), as the specification says.
func (b *build) backendPolicies() {
	list := slices.Clone(b.objs.BackendTLSPolicies)
	slices.SortStableFunc(list, func(a, c *gwapiv1.BackendTLSPolicy) int {
		return cmp.Or(a.CreationTimestamp.Compare(c.CreationTimestamp.Time), cmp.Compare(a.Namespace+"/"+a.Name, c.Namespace+"/"+c.Name))
	})
	for _, obj := range list {
		p := b.readPolicy(obj)
		b.policyList = append(b.policyList, p)
		for _, t := range obj.Spec.TargetRefs {
			if t.Group != "" || t.Kind != "Service" {
				b.problems.add(kindBackendTLSPolicy, obj.Namespace, obj.Name, "UnsupportedTarget", "targetRef %s %s: only Services are supported: ignored", groupKind(t.Group, t.Kind), t.Name)
				continue
			}
			key := policyTarget{service: types.NamespacedName{Namespace: obj.Namespace, Name: string(t.Name)}, section: string(deref(t.SectionName, ""))}
			if won := b.policies[key]; won != nil {
				p.refused, p.refusedMsg = string(gwapiv1.PolicyReasonConflicted),
					fmt.Sprintf("BackendTLSPolicy %s/%s, older (or first by name), targets the same Service port", won.obj.Namespace, won.obj.Name)
				b.problems.add(kindBackendTLSPolicy, obj.Namespace, obj.Name, string(gwapiv1.PolicyReasonConflicted), "targetRef Service %s: %s: not applied there", t.Name, p.refusedMsg)
				continue
			}
			b.policies[key] = p
		}
	}
}

// readPolicy checks a policy and makes its TLS.
func (b *build) readPolicy(obj *gwapiv1.BackendTLSPolicy) *backendPolicy {
	p := &backendPolicy{obj: obj}
	v := obj.Spec.Validation
	refuse := func(reason, format string, args ...any) *backendPolicy {
		p.refused, p.refusedMsg = reason, fmt.Sprintf(format, args...)
		b.problems.add(kindBackendTLSPolicy, obj.Namespace, obj.Name, reason, "%s: its backends are answered 500", p.refusedMsg)
		return p
	}
	host := strings.ToLower(string(v.Hostname))
	if why := validHostname(host); why != "" || strings.HasPrefix(host, "*") {
		return refuse(string(gwapiv1.PolicyReasonInvalid), "validation.hostname %q is no precise host name", v.Hostname)
	}
	if v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != "" {
		return refuse(string(gwapiv1.PolicyReasonInvalid), "validation.wellKnownCACertificates %s is not supported (caCertificateRefs are)", *v.WellKnownCACertificates)
	}
	tls := &ir.UpstreamTLS{SNI: host}
	for i, s := range v.SubjectAltNames {
		switch s.Type {
		case gwapiv1.HostnameSubjectAltNameType:
			name := strings.ToLower(string(s.Hostname))
			if why := validHostname(name); why != "" {
				return refuse(string(gwapiv1.PolicyReasonInvalid), "validation.subjectAltNames[%d]: hostname %s", i, why)
			}
			tls.SubjectAltNames = append(tls.SubjectAltNames, ir.SubjectAltName{DNS: name})
		case gwapiv1.URISubjectAltNameType:
			if u, err := url.Parse(string(s.URI)); err != nil || u.Scheme == "" || strings.ContainsAny(string(s.URI), " \t\r\n") {
				return refuse(string(gwapiv1.PolicyReasonInvalid), "validation.subjectAltNames[%d]: %q is no absolute URI", i, s.URI)
			}
			tls.SubjectAltNames = append(tls.SubjectAltNames, ir.SubjectAltName{URI: string(s.URI)})
		default:
			return refuse(string(gwapiv1.PolicyReasonInvalid), "validation.subjectAltNames[%d]: type %q is not Hostname or URI", i, s.Type)
		}
	}
	if len(tls.SubjectAltNames) == 0 {
		// Without subjectAltNames the hostname is what the certificate
		// must carry.
		tls.VerifyName = host
	}
	var bundle [][]byte
	for i, ref := range v.CACertificateRefs {
		ca, reason, err := b.policyCA(obj.Namespace, ref)
		if err != nil {
			if p.unresolved == "" {
				p.unresolved, p.unresolvedMsg = reason, fmt.Sprintf("caCertificateRefs[%d]: %v", i, err)
			}
			b.problems.add(kindBackendTLSPolicy, obj.Namespace, obj.Name, reason, "caCertificateRefs[%d]: %v", i, err)
			continue
		}
		bundle = append(bundle, ca)
	}
	if len(bundle) == 0 {
		return refuse(string(gwapiv1.BackendTLSPolicyReasonNoValidCACertificate), "no caCertificateRef resolves to a CA certificate")
	}
	tls.CA = bytes.Join(bundle, []byte("\n"))
	p.tls = tls
	return p
}

// policyCA is the CA bundle a policy's caCertificateRef names: a
// ConfigMap of the policy's namespace, its ca.crt. An error comes with
// the ResolvedRefs reason it stands for.
func (b *build) policyCA(namespace string, ref gwapiv1.LocalObjectReference) ([]byte, string, error) {
	if ref.Group != "" || ref.Kind != "ConfigMap" {
		return nil, string(gwapiv1.BackendTLSPolicyReasonInvalidKind), fmt.Errorf("%s %s is not a ConfigMap (the kind supported)", groupKind(ref.Group, ref.Kind), ref.Name)
	}
	name := types.NamespacedName{Namespace: namespace, Name: string(ref.Name)}
	ca, err := b.configMapCA(name)
	if err != nil {
		return nil, string(gwapiv1.BackendTLSPolicyReasonInvalidCACertificateRef), err
	}
	return ca, "", nil
}

// configMapCA is the CA bundle of a ConfigMap's ca.crt, checked as Envoy
// will load it.
func (b *build) configMapCA(name types.NamespacedName) ([]byte, error) {
	cm := b.st.ConfigMaps[name]
	if cm == nil {
		return nil, fmt.Errorf("ConfigMap %s not found", name)
	}
	ca, ok := cm.Data[caKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s has no key %s", name, caKey)
	}
	if err := ir.CheckCABundle([]byte(ca)); err != nil {
		return nil, fmt.Errorf("ConfigMap %s key %s: %w", name, caKey, err)
	}
	return []byte(ca), nil
}

// policyFor is the policy that applies to a backend: the one that
// targets its port by name, else the one that targets its Service.
func (b *build) policyFor(be *ir.Backend) *backendPolicy {
	b.reading.policies()
	if be.PortName != "" {
		if p := b.policies[policyTarget{service: be.Service, section: be.PortName}]; p != nil {
			return p
		}
	}
	return b.policies[policyTarget{service: be.Service}]
}

// withBackendTLS is a backend's cluster policy p (nil: the default) with
// the TLS its BackendTLSPolicy asks for, presenting the client
// certificate of r's Gateways (backendcert.go); an error when the policy
// cannot be applied, whose backend is then answered 500.
func (b *build) withBackendTLS(r *routeObject, be *ir.Backend, p *ir.ClusterPolicy) (*ir.ClusterPolicy, error) {
	bp := b.policyFor(be)
	if bp == nil {
		return p, nil
	}
	if bp.tls == nil {
		return nil, fmt.Errorf("Service %s: BackendTLSPolicy %s/%s cannot be applied (%s)", be.Service, bp.obj.Namespace, bp.obj.Name, bp.refusedMsg)
	}
	out := ir.ClusterPolicy{}
	if p != nil {
		out = *p
	}
	out.TLS = bp.tls
	b.reading.gatewayCerts()
	if c := b.routeClientCert(r); c != nil {
		tls := *bp.tls
		tls.ClientChain, tls.ClientKey = c.Chain, c.Key
		out.TLS = &tls
	}
	return &out, nil
}

// policyStatus is each policy's status.ancestors of ours: one per
// Gateway of ours that a Route sending to a Service the policy targets
// names as a parent (attached or not), each with the policy's Accepted
// and ResolvedRefs.
func (b *build) policyStatus() map[string]gwapiv1.PolicyStatus {
	if len(b.policyList) == 0 {
		return nil
	}
	gateways := b.gatewaysSendingTo()
	out := map[string]gwapiv1.PolicyStatus{}
	for _, p := range b.policyList {
		seen := map[types.NamespacedName]bool{}
		var ancestors []types.NamespacedName
		for _, t := range p.obj.Spec.TargetRefs {
			for _, gw := range gateways[types.NamespacedName{Namespace: p.obj.Namespace, Name: string(t.Name)}] {
				if !seen[gw] && t.Group == "" && t.Kind == "Service" {
					seen[gw] = true
					ancestors = append(ancestors, gw)
				}
			}
		}
		if len(ancestors) == 0 {
			continue
		}
		slices.SortFunc(ancestors, func(a, c types.NamespacedName) int { return cmp.Compare(a.String(), c.String()) })
		gen := p.obj.Generation
		conds := []metav1.Condition{condition(string(gwapiv1.PolicyConditionAccepted), string(gwapiv1.PolicyReasonAccepted), "", true, gen)}
		if p.refused != "" {
			conds[0] = condition(string(gwapiv1.PolicyConditionAccepted), p.refused, p.refusedMsg, false, gen)
		}
		if p.unresolved != "" {
			conds = append(conds, condition(string(gwapiv1.BackendTLSPolicyConditionResolvedRefs), p.unresolved, p.unresolvedMsg, false, gen))
		} else {
			conds = append(conds, condition(string(gwapiv1.BackendTLSPolicyConditionResolvedRefs), string(gwapiv1.BackendTLSPolicyReasonResolvedRefs), "", true, gen))
		}
		var st gwapiv1.PolicyStatus
		for _, gw := range ancestors {
			group, kind, ns := gwapiv1.Group(gwapiv1.GroupName), gwapiv1.Kind(kindGateway), gwapiv1.Namespace(gw.Namespace)
			st.Ancestors = append(st.Ancestors, gwapiv1.PolicyAncestorStatus{
				AncestorRef:    gwapiv1.ParentReference{Group: &group, Kind: &kind, Namespace: &ns, Name: gwapiv1.ObjectName(gw.Name)},
				ControllerName: gwapiv1.GatewayController(b.opts.controllerName()),
				Conditions:     slices.Clone(conds),
			})
		}
		out[p.obj.Namespace+"/"+p.obj.Name] = st
	}
	return out
}

// gatewaysSendingTo are, by Service, the Gateways of ours that an
// HTTPRoute or GRPCRoute sending to the Service (a backendRef or a
// RequestMirror) names as a parent.
func (b *build) gatewaysSendingTo() map[types.NamespacedName][]types.NamespacedName {
	out := map[types.NamespacedName][]types.NamespacedName{}
	add := func(r *routeObject, refs []gwapiv1.BackendObjectReference) {
		gateways := sortedGateways(b.parentGateways(r)) // backendcert.go
		for _, ref := range refs {
			if deref(ref.Group, "") != "" || deref(ref.Kind, "Service") != "Service" {
				continue
			}
			svc := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(r.namespace))), Name: string(ref.Name)}
			for _, gw := range gateways {
				if !slices.Contains(out[svc], gw) {
					out[svc] = append(out[svc], gw)
				}
			}
		}
	}
	for _, hr := range b.objs.HTTPRoutes {
		var refs []gwapiv1.BackendObjectReference
		for _, rule := range hr.Spec.Rules {
			for _, ref := range rule.BackendRefs {
				refs = append(refs, ref.BackendObjectReference)
			}
			for _, f := range rule.Filters {
				if f.RequestMirror != nil {
					refs = append(refs, f.RequestMirror.BackendRef)
				}
			}
		}
		add(httpRouteObject(hr), refs)
	}
	for _, gr := range b.objs.GRPCRoutes {
		var refs []gwapiv1.BackendObjectReference
		for _, rule := range gr.Spec.Rules {
			for _, ref := range rule.BackendRefs {
				refs = append(refs, ref.BackendObjectReference)
			}
		}
		add(grpcRouteObject(gr), refs)
	}
	return out
}

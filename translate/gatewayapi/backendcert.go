package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/certificates"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// gatewayBackendCert is a Gateway's spec.tls.backend.clientCertificateRef
// as a build reads it: the certificate its Routes' clusters present to
// backends they reach over TLS (under a BackendTLSPolicy), or why the
// ref does not resolve (the Gateway's ResolvedRefs condition).
type gatewayBackendCert struct {
	cert        *ir.Certificate
	reason, msg string
}

// backendClientCert resolves a Gateway's clientCertificateRef: a TLS
// Secret (kubernetes.io/tls) of its namespace, or of another whose
// ReferenceGrant opens it to Gateways. nil without one.
func (b *build) backendClientCert(gw *gwapiv1.Gateway) *gatewayBackendCert {
	if gw.Spec.TLS == nil || gw.Spec.TLS.Backend == nil || gw.Spec.TLS.Backend.ClientCertificateRef == nil {
		return nil
	}
	ref := gw.Spec.TLS.Backend.ClientCertificateRef
	bad := func(reason gwapiv1.GatewayConditionReason, format string, args ...any) *gatewayBackendCert {
		msg := fmt.Sprintf("tls.backend.clientCertificateRef: "+format, args...)
		b.problems.add(kindGateway, gw.Namespace, gw.Name, string(reason), "%s: no client certificate is presented to backends", msg)
		return &gatewayBackendCert{reason: string(reason), msg: msg}
	}
	if g, k := deref(ref.Group, ""), deref(ref.Kind, "Secret"); g != "" || k != "Secret" {
		return bad(gwapiv1.GatewayReasonInvalidClientCertificateRef, "%s %s is not a Secret", groupKind(g, k), ref.Name)
	}
	name := types.NamespacedName{Namespace: string(deref(ref.Namespace, gwapiv1.Namespace(gw.Namespace))), Name: string(ref.Name)}
	if name.Namespace != gw.Namespace && !b.granted(gwapiv1.GroupName, kindGateway, gw.Namespace, "", "Secret", name) {
		return bad(gwapiv1.GatewayReasonRefNotPermitted, "Secret %s is in another namespace and no ReferenceGrant there allows it", name)
	}
	cert, err := certificates.FromSecret(name, b.st.Secrets[name])
	if err != nil {
		return bad(gwapiv1.GatewayReasonInvalidClientCertificateRef, "%v", err)
	}
	return &gatewayBackendCert{cert: cert}
}

// routeClientCert is the client certificate a Route's clusters present
// under a BackendTLSPolicy: its parent Gateways'. A cluster presents one,
// and every Gateway's Routes share Envoy's listeners, so of two parent
// Gateways with different certificates the first (by namespace/name)
// gives it, and the Route is told.
func (b *build) routeClientCert(r *routeObject) *ir.Certificate {
	var from types.NamespacedName
	var out *ir.Certificate
	for _, key := range sortedGateways(b.parentGateways(r)) {
		c := b.backendCerts[key]
		if c == nil || c.cert == nil {
			continue
		}
		if out == nil {
			out, from = c.cert, key
			continue
		}
		if c.cert.Name != out.Name {
			b.problem(r, "ClientCertificateConflict", "Gateway %s presents another client certificate to backends than Gateway %s: the Route's clusters present %s's", key, from, from)
		}
	}
	return out
}

// parentGateways are the Gateways of ours a Route names as parents.
func (b *build) parentGateways(r *routeObject) map[types.NamespacedName]bool {
	out := map[types.NamespacedName]bool{}
	for _, p := range r.parentRefs {
		if deref(p.Group, gwapiv1.GroupName) != gwapiv1.GroupName || deref(p.Kind, kindGateway) != kindGateway {
			continue
		}
		key := types.NamespacedName{Namespace: string(deref(p.Namespace, gwapiv1.Namespace(r.namespace))), Name: string(p.Name)}
		if b.gatewayOf[key] != nil {
			out[key] = true
		}
	}
	return out
}

func sortedGateways(set map[types.NamespacedName]bool) []types.NamespacedName {
	out := make([]types.NamespacedName, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, c types.NamespacedName) int { return cmp.Compare(a.String(), c.String()) })
	return out
}

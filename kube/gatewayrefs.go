package kube

import (
	"k8s.io/apimachinery/pkg/types"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// GatewayReferences are the ConfigMaps Gateway API objects name, which a
// State then holds beside the Ingresses' references: the CA bundles of a
// Gateway's client-certificate validation (spec.tls.frontend) and of a
// BackendTLSPolicy (spec.validation.caCertificateRefs). Every
// ConfigMap named is watched, of the object's namespace or another: the
// front-end decides whether a ReferenceGrant lets the object read it.
// (The Secrets Gateways name are TLS Secrets, which a State always holds.)
func GatewayReferences(g *GatewayObjects) []Reference {
	if g == nil {
		return nil
	}
	var out []Reference
	configMaps := func(namespace string, refs []gwapiv1.ObjectReference) {
		for _, r := range refs {
			if r.Group != "" || r.Kind != KindConfigMap {
				continue
			}
			ns := namespace
			if r.Namespace != nil {
				ns = string(*r.Namespace)
			}
			out = append(out, Reference{Kind: KindConfigMap, NamespacedName: types.NamespacedName{Namespace: ns, Name: string(r.Name)}})
		}
	}
	for _, gw := range g.Gateways {
		if gw.Spec.TLS == nil || gw.Spec.TLS.Frontend == nil {
			continue
		}
		f := gw.Spec.TLS.Frontend
		if v := f.Default.Validation; v != nil {
			configMaps(gw.Namespace, v.CACertificateRefs)
		}
		for _, p := range f.PerPort {
			if v := p.TLS.Validation; v != nil {
				configMaps(gw.Namespace, v.CACertificateRefs)
			}
		}
	}
	for _, p := range g.BackendTLSPolicies {
		for _, r := range p.Spec.Validation.CACertificateRefs {
			if r.Group == "" && r.Kind == KindConfigMap {
				out = append(out, Reference{Kind: KindConfigMap, NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: string(r.Name)}})
			}
		}
	}
	return out
}

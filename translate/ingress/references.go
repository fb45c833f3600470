package ingress

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// References lists the Secrets and ConfigMaps an Ingress's annotations
// name (ingress-nginx's prefix), for kube to keep: main hands it to the
// sources. Only objects of the Ingress's own namespace are listed, as the
// front-end reads no other (ingress-nginx's allow-cross-namespace-resources
// is off by default).
func References(ing *networkingv1.Ingress) []kube.Reference {
	return ReferencesWith(annotations.New(""))(ing)
}

// ReferencesWith is References for a registry of another prefix.
func ReferencesWith(reg *annotations.Registry) func(*networkingv1.Ingress) []kube.Reference {
	return func(ing *networkingv1.Ingress) []kube.Reference {
		var out []kube.Reference
		for _, r := range reg.References(ing.Annotations) {
			if r.Namespace == "" {
				r.Namespace = ing.Namespace
			}
			if r.Namespace != ing.Namespace {
				continue
			}
			kind := kube.KindSecret
			if r.Kind == annotations.KindConfigMap {
				kind = kube.KindConfigMap
			}
			out = append(out, kube.Reference{Kind: kind, NamespacedName: types.NamespacedName{Namespace: r.Namespace, Name: r.Name}})
		}
		return out
	}
}

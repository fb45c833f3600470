package kube

import (
	"maps"

	networkingv1 "k8s.io/api/networking/v1"
)

// SpecEqual reports whether two objects of an Ingress can differ only in
// what translation never reads: status, resource version, managed fields.
// It is the one rule for "this Ingress is unchanged", used by the informers
// (to drop status-only updates) and by the translator's memo (to reuse a
// fragment). Spec changes move metadata.generation; annotations do not, so
// they are compared; the UID tells a re-created Ingress apart. Writing status
// replaces every Ingress object, so without this the first change after a
// status round would translate every Ingress again.
func SpecEqual(a, b *networkingv1.Ingress) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	return a.Generation != 0 && a.Generation == b.Generation && a.UID == b.UID &&
		a.Namespace == b.Namespace && a.Name == b.Name && maps.Equal(a.Annotations, b.Annotations)
}

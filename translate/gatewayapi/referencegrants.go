package gatewayapi

import (
	"k8s.io/apimachinery/pkg/types"
)

// granted says whether a ReferenceGrant in to's namespace lets objects of
// fromGroup/fromKind in fromNamespace refer to the object to, of
// toGroup/toKind: a grant's from entries and to entries each combine by
// OR, and a to entry without a name covers every object of its kind.
func (b *build) granted(fromGroup, fromKind, fromNamespace, toGroup, toKind string, to types.NamespacedName) bool {
	b.reading.grants()
	for _, g := range b.objs.ReferenceGrants {
		if g.Namespace != to.Namespace {
			continue
		}
		from := false
		for _, f := range g.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNamespace {
				from = true
				break
			}
		}
		if !from {
			continue
		}
		for _, t := range g.Spec.To {
			if string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || string(*t.Name) == to.Name) {
				return true
			}
		}
	}
	return false
}

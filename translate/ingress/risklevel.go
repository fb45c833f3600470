package ingress

import (
	"maps"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// refuseRiskyAnnotations refuses the Ingress when, under the controller
// ConfigMap (serve --configmap), one of its annotations is one of
// ingress-nginx's keys of a risk above annotations-risk-level, as
// ingress-nginx's Extract rejects such an Ingress
// (internal/ingress/annotations/annotations.go, and
// parser/validators.go's CheckAnnotationRisk, for every key of every
// parser). The Critical keys, the snippets, are left to snippets.go,
// which refuses or drops them as the ConfigMap says. It refuses whatever
// --unsupported-annotations says: the level is the operator's own
// policy, and the key may be an access control. It reports whether it
// refused.
func (f *fragmentBuilder) refuseRiskyAnnotations() bool {
	key, risk, level := riskyAnnotation(f.reg, f.ing, &f.opts)
	if key == "" {
		return false
	}
	f.refuse(key, "its risk, %s, is above the ConfigMap's annotations-risk-level, %s, so ingress-nginx rejects the Ingress", risk, level)
	return true
}

// riskyAnnotation is the first annotation of ing, by name, above the
// ConfigMap's risk level and below Critical, its risk and the level; ""
// without a ConfigMap, or when none is.
func riskyAnnotation(reg *annotations.Registry, ing *networkingv1.Ingress, opts *Options) (key string, risk, level annotations.Risk) {
	if opts.ConfigMap.Name == "" {
		return "", 0, 0
	}
	level = opts.config.riskLevel()
	key, risk = reg.RiskAbove(slices.Sorted(maps.Keys(ing.Annotations)), level)
	return key, risk, level
}

package gatewayapi

import (
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// mirrors resolves a rule's RequestMirror filters: each a copy of the
// share of requests it asks for, sent to a Service port's default cluster
// (whose answers are dropped). An error, for a backend that cannot be
// resolved or a share the IR cannot say, answers the rule 500: a rule is
// never served without its filter.
func (b *build) mirrors(r *routeObject, fs []*gwapiv1.HTTPRequestMirrorFilter, policy *ir.ClusterPolicy) ([]ir.Mirror, error) {
	var out []ir.Mirror
	for i, f := range fs {
		be, err := b.backend(r, f.BackendRef)
		if err != nil {
			// A reference that does not resolve, for the Route's status.
			return nil, refError{reason: reasonOf(err, string(gwapiv1.RouteReasonBackendNotFound)), err: fmt.Errorf("RequestMirror %d: %w", i, err)}
		}
		percent, err := mirrorPercent(f)
		if err != nil {
			return nil, fmt.Errorf("RequestMirror %d: %w", i, err)
		}
		p, err := b.withBackendTLS(r, be, b.portPolicy(be, policy)) // backendtls.go
		if err != nil {
			return nil, fmt.Errorf("RequestMirror %d: %w", i, err)
		}
		out = append(out, ir.Mirror{Cluster: b.cluster(be, p), Percent: percent})
	}
	return out, nil
}

// mirrorPercent is the share a mirror copies: all without percent or
// fraction. The IR counts whole percents, so a fraction must be one.
func mirrorPercent(f *gwapiv1.HTTPRequestMirrorFilter) (uint32, error) {
	switch {
	case f.Percent != nil:
		if *f.Percent < 0 || *f.Percent > 100 {
			return 0, fmt.Errorf("percent %d (0 to 100)", *f.Percent)
		}
		return uint32(*f.Percent), nil
	case f.Fraction != nil:
		num, den := int64(f.Fraction.Numerator), int64(deref(f.Fraction.Denominator, 100))
		if den <= 0 || num < 0 || num > den {
			return 0, fmt.Errorf("fraction %d/%d", num, den)
		}
		if num*100%den != 0 {
			return 0, fmt.Errorf("fraction %d/%d is no whole percent, which is all that is supported yet", num, den)
		}
		return uint32(num * 100 / den), nil
	}
	return 100, nil
}

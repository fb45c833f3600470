package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// readAnnotations parses the Ingress's annotations through the registry,
// reports what cannot be honoured as problems of the Ingress, and builds
// the route policy that every route of the Ingress shares.
func (f *fragmentBuilder) readAnnotations() {
	values, issues := f.reg.Parse(f.ing.Annotations)
	for _, is := range issues {
		f.problem(is.Reason, "%s", is.Message)
	}
	if !values.IsSet() {
		return
	}
	var p ir.RoutePolicy
	set := false
	if on, _ := annotations.ForceSSLRedirect.Get(values); on {
		p.HTTPSRedirect = &ir.HTTPSRedirect{Code: 301}
		set = true
	}
	if set {
		f.policy = &p
	}
}

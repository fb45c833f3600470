package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseSatisfy reads satisfy: whether it is "any" ("all" is nginx's
// default). With "any", a request passes when one of the access checks
// lets it in, its address or one kind of authentication (nginx's satisfy
// any over its access phase: allow and deny, auth_basic, auth_request):
// satisfyAny, in the merge.
func parseSatisfy(values *annotations.Values) bool {
	v, _ := annotations.Satisfy.Get(values)
	return v == "any"
}

// satisfyAny makes p's access checks pass when one of them does. The
// address check then joins the authentication, in the authorisation
// service, where one place can decide them together; the route keeps no
// IP rules of its own. With fewer than two checks there is nothing to
// choose between.
func satisfyAny(p *ir.RoutePolicy) {
	if p.Auth == nil {
		return
	}
	checks := 0
	for _, on := range []bool{p.Auth.Basic != nil, p.Auth.External != nil, p.IPRules != nil} {
		if on {
			checks++
		}
	}
	if checks < 2 {
		return
	}
	a := *p.Auth
	a.Any, a.Address = true, p.IPRules
	p.Auth, p.IPRules = &a, nil
}

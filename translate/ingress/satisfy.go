package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// readSatisfy reads satisfy: with "any", a request passes when one of the
// access checks lets it in, its address or one kind of authentication
// (nginx's satisfy any over its access phase: allow and deny, auth_basic,
// auth_request). The address check then joins the authentication, in the
// authorisation service, where one place can decide them together; the
// route keeps no IP rules of its own. With fewer than two checks there is
// nothing to choose between, and "all" is nginx's default.
func (f *fragmentBuilder) readSatisfy(values *annotations.Values, p *ir.RoutePolicy) {
	if v, _ := annotations.Satisfy.Get(values); v != "any" || p.Auth == nil {
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

package envoy

import (
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// hashPolicies are a route's parts to hash, for its ring hash cluster.
// Envoy hashes each part present and combines them; none present, it
// picks an endpoint at random.
func hashPolicies(parts []ir.HashPart) []*routev3.RouteAction_HashPolicy {
	var out []*routev3.RouteAction_HashPolicy
	header := func(name string) *routev3.RouteAction_HashPolicy {
		return &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Header_{Header: &routev3.RouteAction_HashPolicy_Header{HeaderName: name}}}
	}
	for _, p := range parts {
		switch p.Kind {
		case ir.HashPath:
			out = append(out, header(":path"))
		case ir.HashHost:
			out = append(out, header(":authority"))
		case ir.HashHeader:
			out = append(out, header(p.Name))
		case ir.HashSourceIP:
			out = append(out, &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_ConnectionProperties_{
				ConnectionProperties: &routev3.RouteAction_HashPolicy_ConnectionProperties{SourceIp: true}}})
		case ir.HashCookie:
			// No TTL: the cookie is hashed when present, never set.
			out = append(out, &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_Cookie_{
				Cookie: &routev3.RouteAction_HashPolicy_Cookie{Name: p.Name}}})
		case ir.HashQuery:
			out = append(out, &routev3.RouteAction_HashPolicy{PolicySpecifier: &routev3.RouteAction_HashPolicy_QueryParameter_{
				QueryParameter: &routev3.RouteAction_HashPolicy_QueryParameter{Name: p.Name}}})
		}
	}
	return out
}

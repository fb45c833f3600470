package envoy

import (
	"fmt"
	"net/netip"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ipRules is the RBAC filter's configuration for one route: one ALLOW
// policy whose principal is "not in Deny, and in Allow (when it lists
// any)", so that a refused client gets the filter's 403. The address is the
// client's as the connection manager works it out (remote_ip: the peer, or
// the trusted X-Forwarded-For hop).
func ipRules(r *ir.IPRules) (*rbacv3.RBACPerRoute, error) {
	var ids []*rbacconfigv3.Principal
	if len(r.Deny) > 0 {
		deny, err := anyAddress(r.Deny)
		if err != nil {
			return nil, err
		}
		ids = append(ids, &rbacconfigv3.Principal{Identifier: &rbacconfigv3.Principal_NotId{NotId: deny}})
	}
	if len(r.Allow) > 0 {
		allow, err := anyAddress(r.Allow)
		if err != nil {
			return nil, err
		}
		ids = append(ids, allow)
	}
	principal := &rbacconfigv3.Principal{Identifier: &rbacconfigv3.Principal_AndIds{AndIds: &rbacconfigv3.Principal_Set{Ids: ids}}}
	return &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{Rules: &rbacconfigv3.RBAC{
		Action: rbacconfigv3.RBAC_ALLOW,
		Policies: map[string]*rbacconfigv3.Policy{"ip-rules": {
			Permissions: []*rbacconfigv3.Permission{{Rule: &rbacconfigv3.Permission_Any{Any: true}}},
			Principals:  []*rbacconfigv3.Principal{principal},
		}},
	}}}, nil
}

// anyAddress is a principal matching a client in any of the CIDRs.
func anyAddress(cidrs []string) (*rbacconfigv3.Principal, error) {
	var ids []*rbacconfigv3.Principal
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("ip rules: %w", err)
		}
		ids = append(ids, &rbacconfigv3.Principal{Identifier: &rbacconfigv3.Principal_RemoteIp{RemoteIp: &corev3.CidrRange{
			AddressPrefix: p.Addr().String(),
			PrefixLen:     wrapperspb.UInt32(uint32(p.Bits())),
		}}})
	}
	return &rbacconfigv3.Principal{Identifier: &rbacconfigv3.Principal_OrIds{OrIds: &rbacconfigv3.Principal_Set{Ids: ids}}}, nil
}

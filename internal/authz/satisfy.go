package authz

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// checkAny answers a route of satisfy any, as nginx's access phase does
// with it: the checks run in turn (the address, then each kind) and the
// first that lets the request in decides; one that refuses with 401 or
// 403 only leaves its answer, and the next check runs; any other answer
// (an auth service's 500) ends it. Refused by all, the client gets a 401
// when some check asked for credentials (nginx's access_code keeps its
// first 401, and error_page 401 then sends auth-signin's redirect), else
// the 403. Whatever lets it in, what the route's authentication would
// clear never reaches the backend: the Authorization header of basic
// authentication, the auth-response-headers a client may have sent
// itself (nginx sets them from the auth answer, empty when none ran).
func (s *Server) checkAny(ctx context.Context, req *authv3.CheckRequest, ext map[string]string, kinds []string) (*authv3.CheckResponse, error) {
	clear := map[string][]string{}
	for _, kind := range kinds {
		switch kind {
		case authzapi.KindBasic:
			clear[kind] = []string{"authorization"}
		case authzapi.KindExternal:
			for h := range strings.SplitSeq(ext[authzapi.ExternalResponseHeaders], ",") {
				if h = strings.TrimSpace(h); h != "" {
					clear[kind] = append(clear[kind], strings.ToLower(h))
				}
			}
		}
	}
	// cleared is what the kinds but skip clear.
	cleared := func(skip string) []string {
		var out []string
		for _, kind := range kinds {
			if kind != skip {
				out = append(out, clear[kind]...)
			}
		}
		return out
	}
	var unauthorized, forbidden *authv3.CheckResponse
	switch addressAllowed(req, ext) {
	case addressIn:
		return Allowed(cleared("")...), nil
	case addressOut:
		forbidden = Denied(http.StatusForbidden, nil, "")
	}
	for _, kind := range kinds {
		c, ok := s.checkers[kind]
		if !ok {
			s.log.ErrorContext(ctx, "check request of an unknown kind: refused", "kind", kind)
			return Denied(http.StatusInternalServerError, nil, ""), nil
		}
		resp, err := c.check(ctx, req, ext)
		if err != nil {
			return nil, fmt.Errorf("%s authentication: %w", kind, err)
		}
		if resp.GetStatus().GetCode() == int32(code.Code_OK) {
			return mergeOK(resp, Allowed(cleared(kind)...)), nil
		}
		switch st := resp.GetDeniedResponse().GetStatus().GetCode(); {
		case int(st) == http.StatusUnauthorized:
			if unauthorized == nil {
				unauthorized = resp
			} else if unauthorized.GetDeniedResponse().GetStatus().GetCode() == http.StatusUnauthorized {
				// Both challenges, as nginx sends both WWW-Authenticate.
				d := unauthorized.GetDeniedResponse()
				d.Headers = append(d.Headers, resp.GetDeniedResponse().GetHeaders()...)
			}
		case int(st) == http.StatusFound && kind == authzapi.KindExternal && ext[authzapi.ExternalSignin] != "":
			// auth-signin's redirect is the external check's 401: nginx's
			// error_page 401 sends it whichever check gave the 401.
			unauthorized = resp
		case int(st) == http.StatusForbidden:
			forbidden = resp
		default:
			return resp, nil
		}
	}
	if unauthorized != nil {
		if signin := signinOf(unauthorized); signin != nil {
			return signin, nil
		}
		return unauthorized, nil
	}
	return forbidden, nil
}

// signinOf is resp when it is auth-signin's redirect.
func signinOf(resp *authv3.CheckResponse) *authv3.CheckResponse {
	if resp.GetDeniedResponse().GetStatus().GetCode() == http.StatusFound {
		return resp
	}
	return nil
}

// addressVerdict is what the address check of satisfy any says.
type addressVerdict int

const (
	addressNoSay addressVerdict = iota // no rule matched, or none
	addressIn                          // allowed
	addressOut                         // denied: 403, unless another check lets it in
)

// addressAllowed is nginx's allow and deny over the client's address:
// the deny rules first (denylist-source-range, the ConfigMap's
// block-cidrs), then the allow rules (allowlist-source-range, which
// ingress-nginx ends with deny all). An address that cannot be read is
// refused, never let in.
func addressAllowed(req *authv3.CheckRequest, ext map[string]string) addressVerdict {
	allow, deny := ext[authzapi.AddressAllow], ext[authzapi.AddressDeny]
	if allow == "" && deny == "" {
		return addressNoSay
	}
	addr, err := netip.ParseAddr(req.GetAttributes().GetSource().GetAddress().GetSocketAddress().GetAddress())
	if err != nil {
		return addressOut
	}
	addr = addr.Unmap()
	in := func(list string) bool {
		for cidr := range strings.SplitSeq(list, ",") {
			if p, err := netip.ParsePrefix(strings.TrimSpace(cidr)); err == nil && p.Contains(addr) {
				return true
			}
		}
		return false
	}
	switch {
	case in(deny):
		return addressOut
	case allow == "":
		return addressNoSay
	case in(allow):
		return addressIn
	}
	return addressOut
}

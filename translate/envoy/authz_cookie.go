package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx passes the auth service's cookies to the client with
// add_header Set-Cookie, which nginx applies only to the answers of
// success and redirect statuses (unless auth-always-set-cookie adds
// "always"). Envoy's ext_authz adds the headers an allowed check asks for
// to every answer, so the service hands the cookies over under a header
// of their own (authzapi.ExternalCookieHeader), and this filter, before
// ext_authz in the chain and so after it on the way out, turns them into
// Set-Cookie on those statuses and drops them on the others.

// authCookieFilter is the Lua filter that does it: an instance of its own,
// apart from the response rewrite's.
const authCookieFilter = "ingress-xds.filters.http.auth_cookie"

// authCookieScript is the filter's code; the statuses are nginx's
// add_header's.
const authCookieScript = `
local passed = {[200]=true, [201]=true, [204]=true, [206]=true, [301]=true, [302]=true, [303]=true, [304]=true, [307]=true, [308]=true}
function envoy_on_response(handle)
  local headers = handle:headers()
  local n = headers:getNumValues("` + authzapi.ExternalCookieHeader + `")
  if n == 0 then
    return
  end
  if passed[tonumber(headers:get(":status"))] then
    for i = 0, n - 1 do
      headers:add("set-cookie", headers:getAtIndex("` + authzapi.ExternalCookieHeader + `", i))
    end
  end
  headers:remove("` + authzapi.ExternalCookieHeader + `")
end
`

// authCookieListenerConfig is the filter's listener-wide entry, disabled
// (httpFilter.disabled): it runs on the routes of external auth alone.
func authCookieListenerConfig() *luav3.Lua {
	return &luav3.Lua{DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: authCookieScript}}}
}

// authCookie turns the filter on for a route whose external auth passes
// cookies only on success (auth-always-set-cookie not set), and says
// whether it did.
func authCookie(per map[string]proto.Message, a *ir.Auth) filterSet {
	if a.External == nil || a.External.AlwaysSetCookie {
		return 0
	}
	per[authCookieFilter] = &luav3.LuaPerRoute{}
	return useAuthCookie
}

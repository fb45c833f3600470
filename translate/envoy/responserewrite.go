package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// luaFilter rewrites response headers by pattern (ir.ResponseRewrite):
// Envoy's header mutations can set a header from request data but cannot
// replace part of a response header's value, which nginx's proxy_redirect
// and proxy_cookie_* do. One script serves every route; a route's
// configuration (LuaPerRoute's filter_context) carries only its texts, so
// no script is built from user input.
const luaFilter = "envoy.filters.http.lua"

// responseRewriteScript applies the route's filter context to the
// upstream's response, as nginx does (ngx_http_proxy_module: the rewrite of
// Location and Refresh, and of the domain and path attributes of each
// Set-Cookie). Plain string operations only: string.find with plain=true
// and comparisons, so no text of the context is read as a Lua pattern.
const responseRewriteScript = `
local function replace_prefix(value, from, to)
  if from ~= nil and value:sub(1, #from) == from then
    return to .. value:sub(#from + 1)
  end
  return nil
end

local function rewrite_refresh(value, from, to)
  local i = value:lower():find("url=", 1, true)
  if i == nil then return nil end
  local rest = replace_prefix(value:sub(i + 4), from, to)
  if rest == nil then return nil end
  return value:sub(1, i + 3) .. rest
end

local function rewrite_cookie(value, ctx)
  local dfrom, dto = ctx:get("cookieDomainFrom"), ctx:get("cookieDomainTo")
  local pfrom, pto = ctx:get("cookiePathFrom"), ctx:get("cookiePathTo")
  local parts, changed = {}, false
  local first = true
  for part in (value .. ";"):gmatch("([^;]*);") do
    if not first then
      local lead, name, eq, v, tail = part:match("^(%s*)([^=%s]+)(%s*=%s*)(.-)(%s*)$")
      if name ~= nil then
        local lname = name:lower()
        if lname == "domain" and dfrom ~= nil then
          local dot, d = "", v
          if d:sub(1, 1) == "." then dot, d = ".", d:sub(2) end
          if d:lower() == dfrom:lower() then
            part, changed = lead .. name .. eq .. dot .. dto .. tail, true
          end
        elseif lname == "path" and pfrom ~= nil then
          local p = replace_prefix(v, pfrom, pto)
          if p ~= nil then
            part, changed = lead .. name .. eq .. p .. tail, true
          end
        end
      end
    end
    first = false
    parts[#parts + 1] = part
  end
  if not changed then return nil end
  return table.concat(parts, ";")
end

function envoy_on_response(handle)
  local ctx = handle:filterContext()
  local headers = handle:headers()
  local rfrom, rto = ctx:get("redirectFrom"), ctx:get("redirectTo")
  if rfrom ~= nil then
    local location = headers:get("location")
    if location ~= nil then
      local v = replace_prefix(location, rfrom, rto)
      if v ~= nil then headers:replace("location", v) end
    end
    local refresh = headers:get("refresh")
    if refresh ~= nil then
      local v = rewrite_refresh(refresh, rfrom, rto)
      if v ~= nil then headers:replace("refresh", v) end
    end
  end
  if ctx:get("cookieDomainFrom") == nil and ctx:get("cookiePathFrom") == nil then return end
  local n = headers:getNumValues("set-cookie")
  if n == 0 then return end
  local cookies, changed = {}, false
  for i = 0, n - 1 do
    local c = headers:getAtIndex("set-cookie", i)
    local v = rewrite_cookie(c, ctx)
    if v ~= nil then c, changed = v, true end
    cookies[#cookies + 1] = c
  end
  if not changed then return end
  headers:remove("set-cookie")
  for _, c in ipairs(cookies) do headers:add("set-cookie", c) end
end
`

// luaListenerConfig is the filter's listener-wide entry, disabled
// (httpFilter.disabled): only routes with a configuration of their own run
// the script.
func luaListenerConfig() *luav3.Lua {
	return &luav3.Lua{DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: responseRewriteScript}}}
}

// responseRewrite is a route's configuration of the filter: the texts the
// script replaces.
func responseRewrite(rw *ir.ResponseRewrite) (*luav3.LuaPerRoute, error) {
	fields := map[string]any{}
	if r := rw.Redirect; r != nil {
		fields["redirectFrom"], fields["redirectTo"] = r.From, r.To
	}
	if r := rw.CookieDomain; r != nil {
		fields["cookieDomainFrom"], fields["cookieDomainTo"] = r.From, r.To
	}
	if r := rw.CookiePath; r != nil {
		fields["cookiePathFrom"], fields["cookiePathTo"] = r.From, r.To
	}
	ctx, err := structpb.NewStruct(fields)
	if err != nil {
		return nil, err
	}
	return &luav3.LuaPerRoute{FilterContext: ctx}, nil
}

package envoy

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// luaFilter rewrites responses by pattern (ir.ResponseRewrite): Envoy's
// header mutations can set a header from request data but cannot replace
// part of a response header's value, which nginx's proxy_redirect and
// proxy_cookie_* do, nor edit a cookie's attributes, which
// proxy_cookie_flags does, and Envoy has no filter that replaces text in
// a body, which sub_filter does. One script serves every route; a route's
// configuration (LuaPerRoute's filter_context) carries only its texts, so
// no script is built from user input.
const luaFilter = "envoy.filters.http.lua"

// responseRewriteScript applies the route's filter context to the
// upstream's response, as nginx does (ngx_http_proxy_module: the rewrite of
// Location and Refresh, and of the domain and path attributes of each
// Set-Cookie, and the flags of each Set-Cookie, a cookie so changed
// written again from its attributes; ngx_http_sub_filter_module: the
// replacement of texts in the body). Plain string operations
// only: string.find with plain=true and comparisons, so no text of the
// context is read as a Lua pattern.
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

-- proxy_cookie_flags, as ngx_http_proxy_module does it: the cookie split
-- at each ";" into attributes, spaces trimmed around names and values
-- (ngx_http_proxy_parse_cookie); the first rule whose name matches applies
-- (ngx_http_proxy_rewrite_cookie_flags); its flags edited in order of the
-- attributes and the missing ones appended (ngx_http_proxy_edit_cookie_flags);
-- then the cookie written again, "; " between attributes, as nginx writes
-- it whenever a rule with a flag matched.
local function parse_cookie(value)
  local attrs = {}
  for seg in (value .. ";"):gmatch("([^;]*);") do
    seg = (seg:gsub("^ +", ""))
    local eq = seg:find("=", 1, true)
    if eq ~= nil then
      attrs[#attrs + 1] = {key = (seg:sub(1, eq - 1):gsub(" +$", "")), value = (seg:sub(eq + 1):gsub("^ +", ""):gsub(" +$", ""))}
    else
      attrs[#attrs + 1] = {key = (seg:gsub(" +$", ""))}
    end
  end
  return attrs
end

-- Names compare in ASCII case (string.lower is the C locale's), as
-- nginx's ngx_strncasecmp and its caseless expressions on bytes do.
local function name_matches(name, rule)
  local n, t, m = name:lower(), (rule.text or ""):lower(), rule.match
  if m == "Exact" then return n == t end
  if m == "Prefix" then return n:sub(1, #t) == t end
  if m == "Suffix" then return #t == 0 or n:sub(-#t) == t end
  return n:find(t, 1, true) ~= nil
end

local function edit_flags(attrs, flags)
  local f = {}
  for _, x in ipairs(flags) do f[x] = true end
  local secure, nosecure = f["secure"], f["nosecure"]
  local httponly, nohttponly = f["httponly"], f["nohttponly"]
  local strict, lax, none, nosamesite = f["samesite=strict"], f["samesite=lax"], f["samesite=none"], f["nosamesite"]
  for i = 2, #attrs do
    local a = attrs[i]
    local k = a.key:lower()
    if k == "secure" then
      if secure then secure = false elseif nosecure then a.removed = true end
    elseif k == "httponly" then
      if httponly then httponly = false elseif nohttponly then a.removed = true end
    elseif k == "samesite" then
      local v = (a.value or ""):lower()
      if strict then
        strict = false
        if v ~= "strict" then a.key, a.value = "SameSite", "Strict" end
      elseif lax then
        lax = false
        if v ~= "lax" then a.key, a.value = "SameSite", "Lax" end
      elseif none then
        none = false
        if v ~= "none" then a.key, a.value = "SameSite", "None" end
      elseif nosamesite then
        a.removed = true
      end
    end
  end
  if secure then attrs[#attrs + 1] = {key = "Secure"} end
  if httponly then attrs[#attrs + 1] = {key = "HttpOnly"} end
  if strict then attrs[#attrs + 1] = {key = "SameSite", value = "Strict"}
  elseif lax then attrs[#attrs + 1] = {key = "SameSite", value = "Lax"}
  elseif none then attrs[#attrs + 1] = {key = "SameSite", value = "None"} end
end

-- cookie_flags edits attrs by the first rule whose name matches, and says
-- whether nginx writes the cookie again: a rule with a flag matched.
local function cookie_flags(attrs, rules)
  for _, rule in ipairs(rules) do
    if name_matches(attrs[1].key, rule) then
      if rule.flags == nil or #rule.flags == 0 then return false end
      edit_flags(attrs, rule.flags)
      return true
    end
  end
  return false
end

local function write_cookie(attrs)
  local out = {}
  for _, a in ipairs(attrs) do
    if not a.removed then
      if a.value ~= nil then out[#out + 1] = a.key .. "=" .. a.value else out[#out + 1] = a.key end
    end
  end
  return table.concat(out, "; ")
end

-- set_cookie is ngx_http_proxy_rewrite_cookie: a cookie whose first
-- attribute has no "=" is left alone; else its domain and path are
-- rewritten, then its flags edited, and a cookie changed by either is
-- written again from its attributes.
local function set_cookie(value, ctx, flags)
  local attrs = parse_cookie(value)
  if attrs[1].value == nil then return nil end
  local v = rewrite_cookie(value, ctx)
  if v ~= nil then attrs = parse_cookie(v) end
  local edited = v ~= nil
  if flags ~= nil and cookie_flags(attrs, flags) then edited = true end
  if not edited then return nil end
  return write_cookie(attrs)
end

-- rewrite_headers is proxy_redirect's and proxy_cookie_*'s work on the
-- upstream's headers.
local function rewrite_headers(headers, ctx)
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
  local flags = ctx:get("cookieFlags")
  if ctx:get("cookieDomainFrom") == nil and ctx:get("cookiePathFrom") == nil and flags == nil then return end
  local n = headers:getNumValues("set-cookie")
  if n == 0 then return end
  local cookies, changed = {}, false
  for i = 0, n - 1 do
    local c = headers:getAtIndex("set-cookie", i)
    local v = set_cookie(c, ctx, flags)
    if v ~= nil then c, changed = v, true end
    cookies[#cookies + 1] = c
  end
  if not changed then return end
  headers:remove("set-cookie")
  for _, c in ipairs(cookies) do headers:add("set-cookie", c) end
end

-- media_type is a Content-Type as nginx's sub_filter_types compare it:
-- up to a ";" whose parameter, after spaces, is a charset, lowered
-- (ngx_http_upstream_copy_content_type, ngx_http_test_content_type).
local function media_type(ct)
  local from = 1
  while true do
    local semi = ct:find(";", from, true)
    if semi == nil then break end
    local rest = (ct:sub(semi + 1):gsub("^ +", ""))
    if rest == "" then break end
    if rest:sub(1, 8):lower() == "charset=" then return ct:sub(1, semi - 1):lower() end
    from = semi + 1
  end
  return ct:lower()
end

local function rewrites_type(headers, body)
  local types = body.types
  if types ~= nil and #types == 1 and types[1] == "*" then return true end
  local ct = headers:get("content-type")
  if ct == nil or ct == "" then return false end
  local t = media_type(ct)
  if t == "text/html" then return true end
  for _, x in ipairs(types or {}) do
    if x == t then return true end
  end
  return false
end

-- substitute is ngx_http_sub_parse over a whole body: at the leftmost
-- position where some pair's text starts, compared in ASCII case, the
-- first such pair in the context's order is replaced and the search goes
-- on after it; with once, a pair replaced is not looked for again.
-- Each pair's next occurrence is kept until the search passes it.
local function substitute(s, pairs, once)
  local low = s:lower()
  local nextAt, done = {}, {}
  local out, pos, left, n = {}, 1, #pairs, 0
  while left > 0 do
    local best, at = nil, nil
    for i, p in ipairs(pairs) do
      if not done[i] then
        local o = nextAt[i]
        if o == nil or (o and o < pos) then
          o = low:find(p.from, pos, true) or false
          nextAt[i] = o
        end
        if o and (at == nil or o < at) then best, at = i, o end
      end
    end
    if best == nil then break end
    out[#out + 1] = s:sub(pos, at - 1)
    out[#out + 1] = pairs[best].to or ""
    pos = at + #pairs[best].from
    n = n + 1
    if once then
      done[best] = true
      left = left - 1
    end
  end
  if n == 0 then return nil end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

-- rewrite_body is sub_filter's: ngx_http_sub_header_filter's header
-- changes on every response of its types that is not empty by its
-- Content-Length, then the body, held whole (Envoy's buffer limit
-- bounds it), rewritten.
local function rewrite_body(handle, headers, body)
  local length = headers:get("content-length")
  if length ~= nil and tonumber(length) == 0 then return end
  if not rewrites_type(headers, body) then return end
  headers:remove("content-length")
  if body.keepLastModified then
    local etag = headers:get("etag")
    if etag ~= nil and not (#etag > 2 and etag:sub(1, 2) == "W/") then
      if etag:sub(1, 1) == '"' then headers:replace("etag", "W/" .. etag) else headers:remove("etag") end
    end
  else
    headers:remove("last-modified")
    headers:remove("etag")
  end
  local b = handle:body()
  if b == nil or b:length() == 0 then return end
  local r = substitute(b:getBytes(0, b:length()), body.pairs, body.once)
  if r ~= nil then b:setBytes(r) end
end

-- A redirect of Envoy's own sent relative, as nginx's absolute_redirect
-- off sends it: the Location from the path on, the scheme and host
-- Envoy wrote dropped.
local function relative_location(headers)
  local location = headers:get("location")
  if location == nil then return end
  local scheme = location:find("://", 1, true)
  if scheme == nil then return end
  local path = location:find("/", scheme + 3, true)
  if path == nil then
    headers:replace("location", "/")
  else
    headers:replace("location", location:sub(path))
  end
end

function envoy_on_response(handle)
  local ctx = handle:filterContext()
  local headers = handle:headers()
  if ctx:get("relativeLocation") then
    relative_location(headers)
    return
  end
  rewrite_headers(headers, ctx)
  local body = ctx:get("body")
  if body ~= nil then rewrite_body(handle, headers, body) end
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
	if len(rw.CookieFlags) > 0 {
		// A list of rules in nginx's order, each its name match and its
		// flags as nginx spells them (cookie_flags in the script).
		rules := make([]any, len(rw.CookieFlags))
		for i, r := range rw.CookieFlags {
			flags := make([]any, len(r.Flags))
			for j, f := range r.Flags {
				flags[j] = string(f)
			}
			rules[i] = map[string]any{"match": string(r.Cookie.Match), "text": r.Cookie.Text, "flags": flags}
		}
		fields["cookieFlags"] = rules
	}
	if b := rw.Body; b != nil {
		// The pairs in the IR's order, which substitute in the script
		// keeps; the texts as they are, never read as Lua patterns.
		pairs := make([]any, len(b.Pairs))
		for i, p := range b.Pairs {
			pairs[i] = map[string]any{"from": p.From, "to": p.To}
		}
		body := map[string]any{"pairs": pairs, "once": b.Once, "keepLastModified": b.KeepLastModified}
		if len(b.Types) > 0 {
			types := make([]any, len(b.Types))
			for i, t := range b.Types {
				types[i] = t
			}
			body["types"] = types
		}
		fields["body"] = body
	}
	ctx, err := structpb.NewStruct(fields)
	if err != nil {
		return nil, err
	}
	return &luav3.LuaPerRoute{FilterContext: ctx}, nil
}

// relativeLocation has the script drop the scheme and host from the
// Location of the route's redirect (ir.Redirect.Relative): the route
// answers itself, so the upstream rewrites of its policy, if any, have
// nothing to rewrite and are replaced.
func relativeLocation(route *routev3.Route) error {
	ctx, err := structpb.NewStruct(map[string]any{"relativeLocation": true})
	if err != nil {
		return err
	}
	packed, err := anypb.New(&luav3.LuaPerRoute{FilterContext: ctx})
	if err != nil {
		return err
	}
	if route.TypedPerFilterConfig == nil {
		route.TypedPerFilterConfig = map[string]*anypb.Any{}
	}
	route.TypedPerFilterConfig[luaFilter] = packed
	return nil
}

package envoy

import (
	"strconv"
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// headerValue is a header's value as Envoy's header formatter reads it:
// the literal value with "%" escaped, or its parts, each variable as the
// formatter's command. A value that comes out empty is not sent (Envoy's
// keep_empty_value is off), as nginx sends no header of an empty value.
func headerValue(h ir.Header) string {
	if len(h.Parts) == 0 {
		return literal(h.Value)
	}
	var b strings.Builder
	for _, p := range h.Parts {
		switch p.Var {
		case "":
			b.WriteString(literal(p.Text))
		case ir.VarRequestHeader:
			b.WriteString("%REQ(" + p.Name + ")%")
		case ir.VarResponseHeader:
			b.WriteString("%RESP(" + p.Name + ")%")
		case ir.VarClientAddress:
			b.WriteString("%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%")
		case ir.VarScheme:
			b.WriteString("%REQ(:SCHEME)%")
		case ir.VarHost:
			b.WriteString(requestHost)
		case ir.VarPath:
			// The path as the client sent it, before any rewrite.
			b.WriteString("%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%")
		case ir.VarURI:
			b.WriteString("%PATH(NQ)%")
		case ir.VarRequestID:
			b.WriteString("%REQ(X-REQUEST-ID)%")
		case ir.VarClientCert:
			b.WriteString("%DOWNSTREAM_PEER_CERT%")
		case ir.VarClientSubject:
			b.WriteString("%DOWNSTREAM_PEER_SUBJECT%")
		case ir.VarClientIssuer:
			b.WriteString("%DOWNSTREAM_PEER_ISSUER%")
		}
	}
	return b.String()
}

// nginx's add_header, without "always", adds its header to the answers of
// success and redirect statuses only, and its expires writes Expires and
// Cache-Control on the same statuses; Envoy's route headers have no
// condition. So a route hands such headers over under headers of its own
// (onSuccessHeader, "name:value", one value each; expiresHeader, the
// expiry), which the route first removes from the upstream's response so
// that no backend can inject one, and this filter turns them into the
// headers on those statuses and drops them on the others. The script is
// fixed: no configuration's text ever reaches it.

// onSuccessFilter is the Lua filter that does it: an instance of its own.
const onSuccessFilter = "ingress-xds.filters.http.add_on_success"

// onSuccessHeader carries the headers to add on success.
const onSuccessHeader = "x-ingress-xds-add-on-success"

// expiresHeader carries the expiry: "epoch", "max", or seconds.
const expiresHeader = "x-ingress-xds-expires"

// onSuccessScript is the filter's code; the statuses, the dates and the
// order (expires, then add_header) are nginx's
// (ngx_http_headers_filter_module.c: ngx_http_set_expires replaces
// Expires and every Cache-Control line with one).
const onSuccessScript = `
local passed = {[200]=true, [201]=true, [204]=true, [206]=true, [301]=true, [302]=true, [303]=true, [304]=true, [307]=true, [308]=true}
local function expiry(v)
  if v == "epoch" then
    return "Thu, 01 Jan 1970 00:00:01 GMT", "no-cache"
  elseif v == "max" then
    return "Thu, 31 Dec 2037 23:55:55 GMT", "max-age=315360000"
  end
  local n = tonumber(v)
  if n == nil then
    return nil
  end
  local cc = "max-age=" .. string.format("%d", n)
  if n < 0 then
    cc = "no-cache"
  end
  return os.date("!%a, %d %b %Y %H:%M:%S GMT", os.time() + n), cc
end
function envoy_on_response(handle)
  local headers = handle:headers()
  local n = headers:getNumValues("` + onSuccessHeader + `")
  local expires = headers:get("` + expiresHeader + `")
  if n == 0 and expires == nil then
    return
  end
  local ok = passed[tonumber(headers:get(":status"))]
  local add = {}
  if ok then
    for i = 0, n - 1 do
      local v = headers:getAtIndex("` + onSuccessHeader + `", i)
      local colon = string.find(v, ":", 1, true)
      if colon then
        add[#add + 1] = {string.sub(v, 1, colon - 1), string.sub(v, colon + 1)}
      end
    end
  end
  headers:remove("` + onSuccessHeader + `")
  headers:remove("` + expiresHeader + `")
  if ok and expires ~= nil then
    local date, cc = expiry(expires)
    if date ~= nil then
      headers:replace("expires", date)
      headers:remove("cache-control")
      headers:add("cache-control", cc)
    end
  end
  for _, h in ipairs(add) do
    if h[2] ~= "" then
      headers:add(h[1], h[2])
    end
  end
end
`

// onSuccessListenerConfig is the filter's listener-wide entry, disabled
// (httpFilter.disabled): it runs on the routes that add such headers.
func onSuccessListenerConfig() proto.Message {
	return &luav3.Lua{DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: onSuccessScript}}}
}

// onSuccessHeaders adds a route's headers to add on success and its
// expiry, and turns the filter on for it.
func onSuccessHeaders(route *routev3.Route, per map[string]proto.Message, h *ir.HeaderChanges) filterSet {
	if len(h.AddOnSuccess) == 0 && h.Expires == nil {
		return 0
	}
	route.ResponseHeadersToRemove = append(route.ResponseHeadersToRemove, onSuccessHeader, expiresHeader)
	for _, h := range h.AddOnSuccess {
		route.ResponseHeadersToAdd = append(route.ResponseHeadersToAdd, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: onSuccessHeader, Value: literal(h.Name+":") + headerValue(h)},
			AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
		})
	}
	if e := h.Expires; e != nil {
		v := strconv.FormatInt(e.Seconds, 10)
		switch {
		case e.Epoch:
			v = "epoch"
		case e.Max:
			v = "max"
		}
		route.ResponseHeadersToAdd = append(route.ResponseHeadersToAdd, &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: expiresHeader, Value: v},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		})
	}
	per[onSuccessFilter] = &luav3.LuaPerRoute{}
	return useOnSuccess
}

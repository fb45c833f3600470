package envoy

import (
	"fmt"
	"strings"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	mutationv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	luav3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/lua/v3"
	codecv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/upstream_codec/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Envoy's mirror policy copies a request with its path and body; it may
// change the copy's Host and headers but not its path (":"-headers are
// refused). The cluster of a mirror target (ir.ClusterPolicy.Mirror) has
// an upstream Lua filter that gives each copy the path and body its route
// asks for, told by these headers, which the route's mirror policy sets or
// removes on every copy (so a client cannot send them) and the filter
// removes before the copy leaves.
const (
	mirrorPathHeader = "x-ingress-xds-mirror-path"
	mirrorArgsHeader = "x-ingress-xds-mirror-args"
	mirrorBodyHeader = "x-ingress-xds-mirror-body"
)

// mirrorPolicy is a route's copy of its requests to m.Cluster.
func mirrorPolicy(m ir.Mirror) *routev3.RouteAction_RequestMirrorPolicy {
	mp := &routev3.RouteAction_RequestMirrorPolicy{
		Cluster: m.Cluster,
		RuntimeFraction: &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{
			Numerator: m.Percent, Denominator: typev3.FractionalPercent_HUNDRED,
		}},
		HostRewriteLiteral: m.Host,
	}
	if m.Path == nil && !m.NoBody {
		return mp
	}
	set := func(name, value string) *mutationv3.HeaderMutation {
		return &mutationv3.HeaderMutation{Action: &mutationv3.HeaderMutation_Append{Append: &corev3.HeaderValueOption{
			Header: &corev3.HeaderValue{Key: name, Value: value}, AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}}}
	}
	remove := func(name string) *mutationv3.HeaderMutation {
		return &mutationv3.HeaderMutation{Action: &mutationv3.HeaderMutation_Remove{Remove: name}}
	}
	path, args, body := remove(mirrorPathHeader), remove(mirrorArgsHeader), remove(mirrorBodyHeader)
	if p := m.Path; p != nil {
		// A header value is an Envoy format string: % is doubled (the
		// IR admits none in a prefix, but the format must never read one).
		value := strings.ReplaceAll(p.Prefix, "%", "%%")
		switch p.Then {
		case ir.MirrorRequestURI:
			// The path as the client sent it, before any rewrite.
			value += "%PATH(WQ:ORIG_OR_PATH)%"
		case ir.MirrorQuery:
			args = set(mirrorArgsHeader, "1")
		}
		path = set(mirrorPathHeader, value)
	}
	if m.NoBody {
		body = set(mirrorBodyHeader, "off")
	}
	mp.RequestHeadersMutations = []*mutationv3.HeaderMutation{path, args, body}
	return mp
}

// mirrorScript gives a copy the path and body its headers ask for. The
// query, when asked for, is the copy's own (the request's: rewrites keep
// it), "?" and what follows, when not empty.
const mirrorScript = `
function envoy_on_request(handle)
  local headers = handle:headers()
  local path = headers:get("` + mirrorPathHeader + `")
  local args = headers:get("` + mirrorArgsHeader + `")
  local body = headers:get("` + mirrorBodyHeader + `")
  headers:remove("` + mirrorPathHeader + `")
  headers:remove("` + mirrorArgsHeader + `")
  headers:remove("` + mirrorBodyHeader + `")
  if path ~= nil then
    if args ~= nil then
      local now = headers:get(":path") or ""
      local q = now:find("?", 1, true)
      if q ~= nil and q < #now then path = path .. now:sub(q) end
    end
    if path == "" then path = "/" end
    headers:replace(":path", path)
  end
  if body == "off" then
    local b = handle:body()
    if b ~= nil then b:setBytes("") end
  end
end
`

// mirrorUpstream puts the script in front of a mirror cluster's codec.
func mirrorUpstream(c *clusterv3.Cluster) error {
	lua, err := anypb.New(&luav3.Lua{DefaultSourceCode: &corev3.DataSource{Specifier: &corev3.DataSource_InlineString{InlineString: mirrorScript}}})
	if err != nil {
		return fmt.Errorf("packing the mirror filter: %w", err)
	}
	codec, err := anypb.New(&codecv3.UpstreamCodec{})
	if err != nil {
		return fmt.Errorf("packing the upstream codec: %w", err)
	}
	opts, err := anypb.New(&httpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
			ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_HttpProtocolOptions{HttpProtocolOptions: &corev3.Http1ProtocolOptions{}},
		}},
		HttpFilters: []*hcmv3.HttpFilter{
			{Name: luaFilter, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: lua}},
			{Name: "envoy.filters.http.upstream_codec", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: codec}},
		},
	})
	if err != nil {
		return fmt.Errorf("packing protocol options: %w", err)
	}
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": opts}
	return nil
}

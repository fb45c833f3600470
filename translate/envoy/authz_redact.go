package envoy

import (
	"bytes"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// RedactRoute returns a route configuration safe to show: a copy with the
// user files of basic authentication (the Secret's password hashes, which
// Envoy and the authorisation service must have, but people reading the
// configuration need not) replaced. Any other message, and a route
// configuration without one, is returned as it is.
func RedactRoute(m proto.Message) proto.Message {
	if vh, ok := m.(*routev3.VirtualHost); ok {
		return redactVirtualHost(vh) // vhds.go
	}
	rc, ok := m.(*routev3.RouteConfiguration)
	if !ok {
		return m
	}
	raw, err := proto.Marshal(rc)
	if err != nil || !bytes.Contains(raw, []byte(authzapi.BasicUsers)) {
		return m
	}
	out := &routev3.RouteConfiguration{}
	// Decoding the whole encoding also gives the compacted virtual hosts'
	// routes (compactVirtualHost) back as fields.
	if err := proto.Unmarshal(raw, out); err != nil {
		return &routev3.RouteConfiguration{Name: rc.GetName()} // nothing rather than the hashes
	}
	for _, vh := range out.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			cfg := r.GetTypedPerFilterConfig()[extAuthzFilter]
			if cfg == nil {
				continue
			}
			per := &extauthzv3.ExtAuthzPerRoute{}
			if err := cfg.UnmarshalTo(per); err != nil {
				delete(r.TypedPerFilterConfig, extAuthzFilter)
				continue
			}
			ext := per.GetCheckSettings().GetContextExtensions()
			if _, ok := ext[authzapi.BasicUsers]; !ok {
				continue
			}
			ext[authzapi.BasicUsers] = Redacted
			packed, err := anypb.New(per)
			if err != nil {
				delete(r.TypedPerFilterConfig, extAuthzFilter)
				continue
			}
			r.TypedPerFilterConfig[extAuthzFilter] = packed
		}
	}
	return out
}

// redactRoutes is RedactRoute over a list.
func redactRoutes(rs []*routev3.RouteConfiguration) []*routev3.RouteConfiguration {
	out := make([]*routev3.RouteConfiguration, len(rs))
	for i, r := range rs {
		out[i] = RedactRoute(r).(*routev3.RouteConfiguration)
	}
	return out
}

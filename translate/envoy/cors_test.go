package envoy

import (
	"regexp"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A preflight comes first and turns off every filter its route configures,
// but the client certificate's subject check, which nginx makes before its
// rewrite phase; with a list of origins the plain route stays last, for
// the origins not allowed.
func TestCORSRoutes(t *testing.T) {
	anyConfig, err := anypb.New(&emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	route := &routev3.Route{
		Match:                &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}},
		Action:               &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "c"}}},
		TypedPerFilterConfig: map[string]*anypb.Any{rbacFilter: anyConfig, clientCertFilter: anyConfig},
	}
	list := &ir.CORS{AllowOrigins: []ir.StringMatch{{Exact: "https://a.example.com"}, {Regex: `https://[A-Za-z0-9\-]+\.example\.org`}}, MaxAgeSeconds: 5}
	out, err := corsRoutes([]*routev3.Route{route}, list)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("%d routes, want the preflight, the allowed origins' and the plain one", len(out))
	}
	pre, allowed, plain := out[0], out[1], out[2]
	if pre.GetDirectResponse().GetStatus() != 204 || pre.Match.Headers[len(pre.Match.Headers)-1].GetStringMatch().GetExact() != "OPTIONS" {
		t.Errorf("the first route is no OPTIONS 204: %v", pre)
	}
	off := &routev3.FilterConfig{}
	if err := pre.TypedPerFilterConfig[rbacFilter].UnmarshalTo(off); err != nil || !off.Disabled {
		t.Errorf("the preflight keeps the RBAC filter on: %v", pre.TypedPerFilterConfig[rbacFilter])
	}
	if !proto.Equal(pre.TypedPerFilterConfig[clientCertFilter], anyConfig) {
		t.Errorf("the preflight turned the client certificate's check off")
	}
	if plain != route || len(route.Match.Headers) != 0 || len(route.ResponseHeadersToAdd) != 0 {
		t.Errorf("the plain route was changed: %v", plain)
	}
	re := regexp.MustCompile("^(?:" + allowed.Match.Headers[0].GetStringMatch().GetSafeRegex().GetRegex() + ")$")
	for origin, want := range map[string]bool{
		"https://a.example.com": true, "HTTPS://A.EXAMPLE.COM": true, "https://b.example.org": true,
		"https://c.b.example.org": false, "https://a.example.com:443": false, "http://a.example.com": false,
	} {
		if re.MatchString(origin) != want {
			t.Errorf("origin %q allowed: %v, want %v", origin, !want, want)
		}
	}
	if got := responseHeaderValue(allowed, "access-control-allow-origin"); got != "%REQ(origin)%" {
		t.Errorf("a listed origin is not echoed: %q", got)
	}

	anyOrigin := &ir.CORS{AnyOrigin: true, AllowMethods: "GET, 100%", AllowCredentials: true}
	out, err = corsRoutes([]*routev3.Route{route}, anyOrigin)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || len(out[1].Match.Headers) != 0 {
		t.Fatalf("any origin: %d routes, want the preflight and the route, with no Origin match", len(out))
	}
	for name, want := range map[string]string{
		"access-control-allow-origin": "*", "access-control-allow-credentials": "true",
		"access-control-allow-methods": "GET, 100%%", "access-control-max-age": "0", "access-control-expose-headers": "",
	} {
		if got := responseHeaderValue(out[1], name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func responseHeaderValue(r *routev3.Route, name string) string {
	for _, h := range r.ResponseHeadersToAdd {
		if h.GetHeader().GetKey() == name {
			return h.GetHeader().GetValue()
		}
	}
	return ""
}

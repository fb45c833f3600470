package envoy

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func TestShareRouteSettings(t *testing.T) {
	retries := func(n uint32) *routev3.RetryPolicy {
		return &routev3.RetryPolicy{RetryOn: "reset", NumRetries: wrapperspb.UInt32(n)}
	}
	buffer := func(size uint32) *anypb.Any {
		a, err := anypb.New(bodyLimit(&ir.RequestBody{MaxBytes: size}))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	header := func(v string) []*corev3.HeaderValueOption {
		return []*corev3.HeaderValueOption{{Header: &corev3.HeaderValue{Key: "X-Forwarded-Prefix", Value: v}}}
	}
	forward := func(rp *routev3.RetryPolicy, per *anypb.Any, h []*corev3.HeaderValueOption) *routev3.Route {
		r := &routev3.Route{Match: prefixMatch(), Action: &routev3.Route_Route{Route: &routev3.RouteAction{ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: "c"}, RetryPolicy: rp}}, RequestHeadersToAdd: h}
		if per != nil {
			r.TypedPerFilterConfig = map[string]*anypb.Any{bufferFilter: per}
		}
		return r
	}
	redirect := &routev3.Route{Match: prefixMatch(), Action: &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{}}}
	for _, tc := range []struct {
		name    string
		routes  []*routev3.Route
		retry   bool // the retry policy moves to the host
		buffer  bool
		headers bool
	}{
		{"all the same", []*routev3.Route{forward(retries(1), buffer(8), header("/a")), forward(retries(1), buffer(8), header("/a"))}, true, true, true},
		{"a redirect beside: the retries move, the buffer does not", []*routev3.Route{forward(retries(1), buffer(8), nil), redirect, forward(retries(1), buffer(8), nil)}, true, false, false},
		{"one different", []*routev3.Route{forward(retries(1), buffer(8), header("/a")), forward(retries(2), buffer(9), header("/b"))}, false, false, false},
		{"one without", []*routev3.Route{forward(retries(1), buffer(8), header("/a")), forward(nil, nil, nil)}, false, false, false},
		{"one route", []*routev3.Route{forward(retries(1), buffer(8), header("/a"))}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vh := &routev3.VirtualHost{Name: "h", Domains: []string{"h"}, Routes: tc.routes}
			before := proto.Clone(vh).(*routev3.VirtualHost)
			shareRouteSettings(vh)
			if got := vh.RetryPolicy != nil; got != tc.retry {
				t.Errorf("retry policy on the host: %v, want %v", got, tc.retry)
			}
			if got := vh.TypedPerFilterConfig[bufferFilter] != nil; got != tc.buffer {
				t.Errorf("buffer configuration on the host: %v, want %v", got, tc.buffer)
			}
			if got := len(vh.RequestHeadersToAdd) != 0; got != tc.headers {
				t.Errorf("request headers on the host: %v, want %v", got, tc.headers)
			}
			// Each route resolves to what it had: its own setting, or the
			// host's when it has none (Envoy's rule for these three).
			for i, r := range vh.Routes {
				was := before.Routes[i]
				rp := r.GetRoute().GetRetryPolicy()
				if rp == nil && r.GetRoute() != nil {
					rp = vh.RetryPolicy
				}
				if !proto.Equal(rp, was.GetRoute().GetRetryPolicy()) {
					t.Errorf("route %d: retry policy %v, was %v", i, rp, was.GetRoute().GetRetryPolicy())
				}
				per := r.TypedPerFilterConfig[bufferFilter]
				if per == nil {
					per = vh.TypedPerFilterConfig[bufferFilter]
				}
				if !proto.Equal(per, was.TypedPerFilterConfig[bufferFilter]) {
					t.Errorf("route %d: buffer %v, was %v", i, per, was.TypedPerFilterConfig[bufferFilter])
				}
				h := r.RequestHeadersToAdd
				if len(h) == 0 {
					h = vh.RequestHeadersToAdd
				}
				if !sameHeaderOptions(h, was.RequestHeadersToAdd) {
					t.Errorf("route %d: request headers %v, was %v", i, h, was.RequestHeadersToAdd)
				}
			}
			// The compacted host encodes the same as the whole one.
			if err := vh.ValidateAll(); err != nil {
				t.Fatal(err)
			}
			whole, err := proto.MarshalOptions{Deterministic: true}.Marshal(vh)
			if err != nil {
				t.Fatal(err)
			}
			compact, err := proto.MarshalOptions{Deterministic: true}.Marshal(compactVirtualHost(vh))
			if err != nil {
				t.Fatal(err)
			}
			if string(whole) != string(compact) {
				t.Errorf("the compacted host's encoding differs from the host's")
			}
		})
	}
}

func prefixMatch() *routev3.RouteMatch {
	return &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
}

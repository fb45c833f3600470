package envoy

import (
	"slices"
	"testing"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A header's parts are Envoy's formatter commands, its text escaped: a
// "%" a user wrote never becomes a command.
func TestHeaderValue(t *testing.T) {
	for _, tc := range []struct {
		h    ir.Header
		want string
	}{
		{ir.Header{Value: "100% %REQ(x)%"}, "100%% %%REQ(x)%%"},
		{ir.Header{Parts: []ir.ValuePart{{Text: "for "}, {Var: ir.VarClientAddress}, {Text: " 5%"}}}, "for %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% 5%%"},
		{ir.Header{Parts: []ir.ValuePart{{Var: ir.VarRequestHeader, Name: "user-agent"}, {Var: ir.VarResponseHeader, Name: "x-cache"}}}, "%REQ(user-agent)%%RESP(x-cache)%"},
		{ir.Header{Parts: []ir.ValuePart{{Var: ir.VarScheme}, {Text: "://"}, {Var: ir.VarHost}, {Var: ir.VarPath}}}, "%REQ(:SCHEME)%://%REQ(:authority)%%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%"},
		{ir.Header{Parts: []ir.ValuePart{{Var: ir.VarRequestID}}}, "%REQ(X-REQUEST-ID)%"},
		{ir.Header{Parts: []ir.ValuePart{{Var: ir.VarURI}}}, "%PATH(NQ)%"},
	} {
		if got := headerValue(tc.h); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.h, got, tc.want)
		}
	}
}

// Headers added on success travel under the carrier header, which the
// route first removes from the upstream's response, and turn the filter
// on for the route alone.
func TestOnSuccessHeaders(t *testing.T) {
	route := &routev3.Route{}
	per := map[string]proto.Message{}
	uses := onSuccessHeaders(route, per, &ir.HeaderChanges{AddOnSuccess: []ir.Header{{Name: "X-Cache", Value: "HIT"}, {Name: "X-Host", Parts: []ir.ValuePart{{Var: ir.VarHost}}}}})
	if uses != useOnSuccess || per[onSuccessFilter] == nil {
		t.Fatalf("uses %v, per-route %v: want the filter on", uses, per)
	}
	if !slices.Equal(route.ResponseHeadersToRemove, []string{onSuccessHeader, expiresHeader}) {
		t.Errorf("removes %q, want the carrier removed first", route.ResponseHeadersToRemove)
	}
	var got []string
	for _, h := range route.ResponseHeadersToAdd {
		if h.Header.Key != onSuccessHeader {
			t.Errorf("adds %s", h.Header.Key)
		}
		got = append(got, h.Header.Value)
	}
	if want := []string{"X-Cache:HIT", "X-Host:%REQ(:authority)%"}; !slices.Equal(got, want) {
		t.Errorf("carried %q, want %q", got, want)
	}
	if onSuccessHeaders(&routev3.Route{}, map[string]proto.Message{}, &ir.HeaderChanges{}) != 0 {
		t.Error("no headers turned the filter on")
	}
}

// An expiry travels under its own carrier: seconds, or epoch or max.
func TestExpiresCarried(t *testing.T) {
	for _, tc := range []struct {
		e    ir.Expiry
		want string
	}{{ir.Expiry{Seconds: 2592000}, "2592000"}, {ir.Expiry{Seconds: -1}, "-1"}, {ir.Expiry{}, "0"}, {ir.Expiry{Epoch: true}, "epoch"}, {ir.Expiry{Max: true}, "max"}} {
		route := &routev3.Route{}
		per := map[string]proto.Message{}
		e := tc.e
		if onSuccessHeaders(route, per, &ir.HeaderChanges{Expires: &e}) != useOnSuccess {
			t.Fatalf("%+v: the filter is not on", tc.e)
		}
		if n := len(route.ResponseHeadersToAdd); n != 1 || route.ResponseHeadersToAdd[0].Header.Key != expiresHeader || route.ResponseHeadersToAdd[0].Header.Value != tc.want {
			t.Errorf("%+v: adds %v, want %s: %s", tc.e, route.ResponseHeadersToAdd, expiresHeader, tc.want)
		}
	}
}

// A negated match, and one reading an absent header as empty (nginx's
// $http_*), render as Envoy's.
func TestHeaderMatchNegatedAndMissing(t *testing.T) {
	m := routeMatch("a.example", ir.Match{PathType: ir.PathPrefix, Path: "/", Headers: []ir.HeaderMatch{
		{Name: "x-a", Value: ir.StringMatch{Exact: ""}, MissingIsEmpty: true, Invert: true},
	}})
	h := m.Headers[0]
	if !h.InvertMatch || !h.TreatMissingHeaderAsEmpty {
		t.Errorf("%v: want inverted, missing as empty", h)
	}
}

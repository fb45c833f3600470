package envoy

import (
	"fmt"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	customv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/custom_response/v3"
	redirectv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/custom_response/redirect_policy/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Error pages (ingress-nginx's custom-http-errors) are Envoy's custom
// response filter with a redirect policy, rather than the router's
// internal redirects, which follow only 3xx responses with a Location:
// the filter matches the response's status, and for each code re-runs the
// request, as a GET of the error route's path on the same virtual host,
// with X-Code and the route's headers set, as nginx's error_page sends to
// its @custom_ location. The error route's answer is sent as it is,
// whatever its status (the filter changes only a 2xx one, and only when
// asked), as nginx returns the error backend's status.

// customResponseFilter is the filter's name and per-route key.
const customResponseFilter = "envoy.filters.http.custom_response"

// customResponseListenerConfig is the filter's listener-wide
// configuration: no matcher, so it changes nothing on a route without a
// configuration of its own.
func customResponseListenerConfig() proto.Message { return &customv3.CustomResponse{} }

// errorPages is a route's configuration of the filter: one matcher per
// code.
func errorPages(e *ir.ErrorPages, l listenerSide) (*customv3.CustomResponse, error) {
	input, err := anypb.New(&matcherv3.HttpResponseStatusCodeMatchInput{})
	if err != nil {
		return nil, fmt.Errorf("packing the status input: %w", err)
	}
	list := &xdsmatcherv3.Matcher_MatcherList{}
	for _, code := range e.Codes {
		headers := []*corev3.HeaderValueOption{{
			Header:       &corev3.HeaderValue{Key: "X-Code", Value: fmt.Sprint(code)},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}}
		headers = append(headers, headerOptions(&ir.HeaderChanges{Set: e.Headers})...)
		if l.scopes > 0 {
			// The request run again has no scope header (its routes
			// took it off) and no early header mutation (scopes.go).
			headers = append(headers, routeScopeHeader(l.scopes))
		}
		policy, err := anypb.New(&redirectv3.RedirectPolicy{
			RedirectActionSpecifier: &redirectv3.RedirectPolicy_RedirectAction{RedirectAction: &routev3.RedirectAction{
				PathRewriteSpecifier: &routev3.RedirectAction_PathRedirect{PathRedirect: e.Path},
			}},
			RequestHeadersToAdd: headers,
		})
		if err != nil {
			return nil, fmt.Errorf("packing the error page of %d: %w", code, err)
		}
		list.Matchers = append(list.Matchers, &xdsmatcherv3.Matcher_MatcherList_FieldMatcher{
			Predicate: &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
				SinglePredicate: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
					Input: &xdscorev3.TypedExtensionConfig{Name: "status", TypedConfig: input},
					Matcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: &xdsmatcherv3.StringMatcher{
						MatchPattern: &xdsmatcherv3.StringMatcher_Exact{Exact: fmt.Sprint(code)},
					}},
				},
			}},
			OnMatch: &xdsmatcherv3.Matcher_OnMatch{OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
				Name: fmt.Sprintf("error-page-%d", code), TypedConfig: policy,
			}}},
		})
	}
	return &customv3.CustomResponse{CustomResponseMatcher: &xdsmatcherv3.Matcher{
		MatcherType: &xdsmatcherv3.Matcher_MatcherList_{MatcherList: list},
	}}, nil
}

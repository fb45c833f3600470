package envoy

import (
	"slices"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	mutationv3 "github.com/envoyproxy/go-control-plane/envoy/config/common/mutation_rules/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matchingv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/matching/v3"
	skipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/matcher/action/v3"
	headermutationv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_mutation/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// What is not retried. nginx passes no POST, LOCK or PATCH to the next
// server once it has sent it, unless proxy_next_upstream says
// non_idempotent (ngx_http_upstream_next adds NGX_HTTP_UPSTREAM_FT_NON_
// IDEMPOTENT to the failure when u->request_sent): such a request whose
// connection failed is passed on like any other. ingress-nginx retries
// every location by default (translate/ingress, proxy.go).
//
// A route of nginx's retries therefore retries every method on what
// fails before the request is sent (connect-failure,
// reset-before-request), and its route configuration adds x-envoy-retry-on
// with the rest (refused-stream, reset, and retriable-status-codes, of no
// effect on a route without status codes) to a request without one, which
// the router reads after the routes' headers are added and merges into
// the policy's conditions. One filter per listener, nearest the router,
// gives a POST, LOCK or PATCH x-envoy-retry-on: connect-failure first,
// which the policy has already, so nothing is added; a request of any
// other method skips it. A per-route retry_on or matcher of the method
// would cost Envoy a regular expression compiled again for every route on
// each change (docs/benchmarks.md, "Issue 31: where a delta Envoy's CPU
// per change goes"), a header added by every route a sixth more CPU per
// change, and a filter that writes the header for the other methods every
// GET its run (docs/benchmarks.md, "Issue 31: a POST retried when it was
// not sent"). A client's own header is replaced for those methods, and the
// connection manager drops it from an external client's request before
// any filter.
//
// Every other forwarding route removes the header (its route's headers
// come after its route configuration's: MostSpecificHeaderMutationsWins),
// and turns the filter off: one whose retries take every method
// (non_idempotent, Gateway API's), one without retries, and one retried
// on status codes alone (http_503 without error), rare enough to keep its
// conditions and the method matcher on its own policy.

// nonIdempotentFilter is the filter's name in the chain and the key of
// its per-route configuration.
const nonIdempotentFilter = "ingress-xds.non-idempotent"

// nonIdempotentMethods are the methods nginx does not pass to the next
// server once sent (ngx_http_upstream.c, ngx_http_upstream_next).
var nonIdempotentMethods = [...]string{"POST", "LOCK", "PATCH"}

// The conditions a route of nginx's retries keeps for every method, those
// it adds for the others, and what the filter gives the non-idempotent
// ones in their place (retryPolicy, retries.go; renderRoute, route.go).
const (
	beforeSent = "connect-failure,reset-before-request"
	afterSent  = "refused-stream,reset,retriable-status-codes"
	notSent    = "connect-failure"
)

// retryOnHeader is the request header the router reads the conditions a
// request adds from.
const retryOnHeader = "x-envoy-retry-on"

// addRetriedAfterSent gives rc, of a listener whose filters are uses, the
// addition of afterSent to a request without the header, where the
// listener has the filter: some route of rc, or of its listener, has
// nginx's retries.
func addRetriedAfterSent(rc *routev3.RouteConfiguration, uses filterSet) {
	if uses&useNonIdempotent == 0 {
		return
	}
	rc.RequestHeadersToAdd = append(rc.RequestHeadersToAdd, &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: retryOnHeader, Value: afterSent},
		AppendAction: corev3.HeaderValueOption_ADD_IF_ABSENT,
	})
}

// dropRetryOn makes route, a forwarding route without nginx's retries,
// remove the header its route configuration may add (addRetriedAfterSent).
func dropRetryOn(route *routev3.Route) {
	route.RequestHeadersToRemove = append(route.RequestHeadersToRemove, retryOnHeader)
}

// nonIdempotentListenerConfig is the filter: header_mutation of
// x-envoy-retry-on to notSent, skipped unless the method is one of
// nonIdempotentMethods. Its messages are fixed and well formed, so
// packing them cannot fail.
func nonIdempotentListenerConfig() proto.Message {
	mutation, _ := anypb.New(&headermutationv3.HeaderMutation{Mutations: &headermutationv3.Mutations{
		RequestMutations: []*mutationv3.HeaderMutation{{Action: &mutationv3.HeaderMutation_Append{Append: &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: retryOnHeader, Value: notSent},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}}}},
	}})
	input, _ := anypb.New(&envoymatcherv3.HttpRequestHeaderMatchInput{HeaderName: ":method"})
	skip, _ := anypb.New(&skipv3.SkipFilter{})
	var methods []*xdsmatcherv3.Matcher_MatcherList_Predicate
	for _, m := range nonIdempotentMethods {
		methods = append(methods, &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
			SinglePredicate: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
				Input: &xdscorev3.TypedExtensionConfig{Name: "method", TypedConfig: input},
				Matcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: &xdsmatcherv3.StringMatcher{
					MatchPattern: &xdsmatcherv3.StringMatcher_Exact{Exact: m},
				}},
			},
		}})
	}
	notOne := &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_NotMatcher{
		NotMatcher: &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_OrMatcher{
			OrMatcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: methods},
		}},
	}}
	return &matchingv3.ExtensionWithMatcher{
		ExtensionConfig: &corev3.TypedExtensionConfig{Name: "envoy.filters.http.header_mutation", TypedConfig: mutation},
		XdsMatcher: &xdsmatcherv3.Matcher{MatcherType: &xdsmatcherv3.Matcher_MatcherList_{MatcherList: &xdsmatcherv3.Matcher_MatcherList{
			Matchers: []*xdsmatcherv3.Matcher_MatcherList_FieldMatcher{{
				Predicate: notOne,
				OnMatch: &xdsmatcherv3.Matcher_OnMatch{OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
					Name: "skip", TypedConfig: skip,
				}}},
			}},
		}}},
	}
}

// nonIdempotentPerRoute is what a forward route's retries need of the
// filter: in the chain for nginx's retries (retriedAfterSent), off on a
// route with other retries or none. A route that answers itself sends
// nothing upstream: left alone.
func nonIdempotentPerRoute(r *ir.Retries, forwards bool, per map[string]proto.Message) filterSet {
	switch {
	case !forwards:
		return 0
	case retriedAfterSent(r):
		return useNonIdempotent
	}
	per[nonIdempotentFilter] = &routev3.FilterConfig{Disabled: true}
	return 0
}

// retriedAfterSent says whether a route's retries are nginx's, with error
// or timeout, which the route and the filter split by what fails before
// and after a request is sent (a route of status codes alone keeps its
// own conditions).
func retriedAfterSent(r *ir.Retries) bool {
	return r != nil && slices.Equal(r.NotMethods, nonIdempotentMethods[:]) && slices.Contains(r.On, "connect-failure")
}

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
// server once sent, unless proxy_next_upstream says non_idempotent, and
// ingress-nginx retries every location by default (translate/ingress,
// proxy.go). Envoy retries a request only when one of a retry policy's
// retriable_request_headers matches, so "none of these methods" was one
// inverted regular expression on each route's policy, which Envoy
// compiled again for every virtual host each time it built its route
// table: a fifth of its CPU for each change at 1,000 Ingresses
// (docs/benchmarks.md, "Issue 31: where a delta Envoy's CPU per change
// goes").
//
// Instead, one filter per listener, nearest the router, gives a request
// of those methods x-envoy-max-retries: 0, which the router reads (and
// takes off the request) in place of the policy's number of retries; a
// request of any other method skips it. A client's own header of that
// name is replaced for those methods, and for the others the connection
// manager drops it from an external client's request before any filter.
// A route whose retries take those methods too (non_idempotent, Gateway
// API's) turns the filter off.

// nonIdempotentFilter is the filter's name in the chain and the key of
// its per-route configuration.
const nonIdempotentFilter = "ingress-xds.non-idempotent"

// nonIdempotentMethods are the methods nginx does not pass to the next
// server once sent (ngx_http_upstream.c, ngx_http_upstream_next).
var nonIdempotentMethods = [...]string{"POST", "LOCK", "PATCH"}

// notRetriedByFilter says whether the listener's filter says what a
// route's retries leave out: exactly nginx's non-idempotent methods.
func notRetriedByFilter(r *ir.Retries) bool {
	return slices.Equal(r.NotMethods, nonIdempotentMethods[:])
}

// nonIdempotentListenerConfig is the filter: header_mutation, skipped
// unless the method is one of nonIdempotentMethods. Its messages are
// fixed and well formed, so packing them cannot fail.
func nonIdempotentListenerConfig() proto.Message {
	mutation, _ := anypb.New(&headermutationv3.HeaderMutation{Mutations: &headermutationv3.Mutations{
		RequestMutations: []*mutationv3.HeaderMutation{{Action: &mutationv3.HeaderMutation_Append{Append: &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: "x-envoy-max-retries", Value: "0"},
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

// nonIdempotentPerRoute is what a route's retries need of the filter: in
// the chain when they leave nginx's methods out, off on the route when
// they retry every method.
func nonIdempotentPerRoute(r *ir.Retries, per map[string]proto.Message) filterSet {
	if r == nil {
		return 0
	}
	if notRetriedByFilter(r) {
		return useNonIdempotent
	}
	per[nonIdempotentFilter] = &routev3.FilterConfig{Disabled: true}
	return 0
}

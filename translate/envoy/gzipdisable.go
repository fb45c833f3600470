package envoy

import (
	"fmt"

	xdscorev3 "github.com/cncf/xds/go/xds/core/v3"
	xdsmatcherv3 "github.com/cncf/xds/go/xds/type/matcher/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	matchingv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/matching/v3"
	skipv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/matcher/action/v3"
	envoymatcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// nginx's gzip_disable (the ConfigMap's gzip-disable): the responses to
// some clients, by their User-Agent, are not compressed. Envoy's
// compressor cannot tell clients apart, so a setting that skips some is
// its compressor wrapped in a matcher (ExtensionWithMatcher) whose
// SkipFilter action leaves the filter out of a request the User-Agent
// matches. A route turns such a filter on with the wrapper's own
// per-route configuration, the same matcher (Envoy refuses a FilterConfig
// without one).
//
// The expression is searched for, in any case, as nginx compiles
// gzip_disable's caselessly (ngx_http_gzip_disable); Envoy's string
// matcher matches a whole value, so it is written as .*(?:re).*. msie6
// is nginx's mask of Internet Explorer 4 to 6 (ngx_http_process_user_agent
// sets msie6 for "MSIE 4.", "MSIE 5." and "MSIE 6." not followed by SV1,
// with something after the version's dot), where nginx looks at the first
// "MSIE " alone.

// skipClients is the matcher of the clients c skips; nil for none.
func skipClients(c *ir.Compression) *xdsmatcherv3.Matcher {
	var any []*xdsmatcherv3.Matcher_MatcherList_Predicate
	if c.SkipUserAgent != "" {
		any = append(any, userAgentMatches("(?i).*(?:"+c.SkipUserAgent+").*"))
	}
	if c.SkipMSIE6 {
		any = append(any, userAgentMatches(`.*MSIE [45]\..+`), allOf(
			userAgentMatches(`.*MSIE 6\..+`),
			&xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_NotMatcher{
				NotMatcher: userAgentMatches(`.*MSIE 6\..*SV1.*`),
			}},
		))
	}
	if len(any) == 0 {
		return nil
	}
	predicate := any[0]
	if len(any) > 1 {
		predicate = &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_OrMatcher{
			OrMatcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: any},
		}}
	}
	skip, _ := anypb.New(&skipv3.SkipFilter{}) // a known message always packs
	return &xdsmatcherv3.Matcher{MatcherType: &xdsmatcherv3.Matcher_MatcherList_{MatcherList: &xdsmatcherv3.Matcher_MatcherList{
		Matchers: []*xdsmatcherv3.Matcher_MatcherList_FieldMatcher{{
			Predicate: predicate,
			OnMatch: &xdsmatcherv3.Matcher_OnMatch{OnMatch: &xdsmatcherv3.Matcher_OnMatch_Action{Action: &xdscorev3.TypedExtensionConfig{
				Name: "skip", TypedConfig: skip,
			}}},
		}},
	}}}
}

// userAgentMatches is the predicate of a User-Agent that RE2 expression
// re matches whole.
func userAgentMatches(re string) *xdsmatcherv3.Matcher_MatcherList_Predicate {
	input, _ := anypb.New(&envoymatcherv3.HttpRequestHeaderMatchInput{HeaderName: "user-agent"}) // a known message always packs
	return &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_{
		SinglePredicate: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate{
			Input: &xdscorev3.TypedExtensionConfig{Name: "user-agent", TypedConfig: input},
			Matcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_SinglePredicate_ValueMatch{ValueMatch: &xdsmatcherv3.StringMatcher{
				MatchPattern: &xdsmatcherv3.StringMatcher_SafeRegex{SafeRegex: &xdsmatcherv3.RegexMatcher{
					EngineType: &xdsmatcherv3.RegexMatcher_GoogleRe2{GoogleRe2: &xdsmatcherv3.RegexMatcher_GoogleRE2{}},
					Regex:      re,
				}},
			}},
		},
	}}
}

func allOf(ps ...*xdsmatcherv3.Matcher_MatcherList_Predicate) *xdsmatcherv3.Matcher_MatcherList_Predicate {
	return &xdsmatcherv3.Matcher_MatcherList_Predicate{MatchType: &xdsmatcherv3.Matcher_MatcherList_Predicate_AndMatcher{
		AndMatcher: &xdsmatcherv3.Matcher_MatcherList_Predicate_PredicateList{Predicate: ps},
	}}
}

// skippingCompressor is the compressor of setting c wrapped in the
// matcher skip.
func skippingCompressor(c *ir.Compression, skip *xdsmatcherv3.Matcher) (*anypb.Any, error) {
	inner, err := anypb.New(compressor(c))
	if err != nil {
		return nil, fmt.Errorf("packing the compressor: %w", err)
	}
	return anypb.New(&matchingv3.ExtensionWithMatcher{
		ExtensionConfig: &corev3.TypedExtensionConfig{Name: "envoy.filters.http.compressor", TypedConfig: inner},
		XdsMatcher:      skip,
	})
}

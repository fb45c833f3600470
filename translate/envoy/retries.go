package envoy

import (
	"regexp"
	"strings"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	previoushostsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// hostSelectionAttempts is how often Envoy picks again when it picks an
// endpoint a request has already failed on; after that it takes the last
// pick, so a backend with one endpoint is still retried.
const hostSelectionAttempts = 5

// retryPolicy renders a route's retries. A retry goes to an endpoint the
// request has not tried yet (previous_hosts), as ir.Retries promises and
// nginx's proxy_next_upstream does.
func retryPolicy(r *ir.Retries) *routev3.RetryPolicy {
	on := strings.Join(r.On, ",")
	if retriedAfterSent(r) { // nonidempotent.go
		// Every method is retried on what fails before the request is
		// sent; the listener's filter adds the rest for the others.
		on = beforeSent
	}
	rp := &routev3.RetryPolicy{
		RetryOn:                       on,
		NumRetries:                    wrapperspb.UInt32(r.Attempts),
		RetriableStatusCodes:          r.StatusCodes,
		HostSelectionRetryMaxAttempts: hostSelectionAttempts,
		RetryHostPredicate:            []*routev3.RetryPolicy_RetryHostPredicate{previousHosts()},
	}
	if r.Backoff > 0 {
		// Envoy's back-off is fully jittered: a retry waits a random
		// time up to the base interval, doubled for each retry after
		// (docs/gateway-api.md states the difference).
		rp.RetryBackOff = &routev3.RetryPolicy_RetryBackOff{BaseInterval: durationpb.New(time.Duration(r.Backoff))}
	}
	if len(r.NotMethods) > 0 && !retriedAfterSent(r) {
		// Envoy retries a request only when one of these matches: the
		// method is none of the others.
		quoted := make([]string, len(r.NotMethods))
		for i, m := range r.NotMethods {
			quoted[i] = regexp.QuoteMeta(m)
		}
		rp.RetriableRequestHeaders = []*routev3.HeaderMatcher{{
			Name: ":method",
			HeaderMatchSpecifier: &routev3.HeaderMatcher_StringMatch{StringMatch: &matcherv3.StringMatcher{
				MatchPattern: &matcherv3.StringMatcher_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: strings.Join(quoted, "|")}},
			}},
			InvertMatch: true,
		}}
	}
	return rp
}

func previousHosts() *routev3.RetryPolicy_RetryHostPredicate {
	// An empty message always packs.
	cfg, _ := anypb.New(&previoushostsv3.PreviousHostsPredicate{})
	return &routev3.RetryPolicy_RetryHostPredicate{
		Name:       "envoy.retry_host_predicates.previous_hosts",
		ConfigType: &routev3.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: cfg},
	}
}

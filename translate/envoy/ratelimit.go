package envoy

import (
	"fmt"
	"math"
	"strconv"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	localratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/local_ratelimit/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	metadatav3 "github.com/envoyproxy/go-control-plane/envoy/type/metadata/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Rate limits (ir.RateLimit) are Envoy's local rate limit filter, one
// token bucket per client address and rate on each route: the route's
// filter configuration turns each request into one descriptor per rate,
// (rate index, client address), and a descriptor whose address is left
// out (a wildcard) gives every distinct address a bucket of its own, kept
// in a cache of the most recently seen. The address is the one the
// connection manager settled on, as RBAC's remote_ip: the peer, or the
// trusted X-Forwarded-For hop.
//
// Exempt clients: Envoy's descriptors cannot test an address against a
// CIDR, but RBAC can. A second RBAC filter, ahead of the rate limit and
// with shadow rules only (it never refuses anyone), records in the
// request's dynamic metadata whether the client is in the exempt ranges;
// the descriptors carry that verdict, and only "denied" (not exempt)
// descriptors have buckets. An exempt client's descriptors match none, and
// fall to the route's default bucket, which no client can empty.
const (
	rateLimitFilter = "envoy.filters.http.local_ratelimit"
	// rateLimitExemptFilter is the shadow RBAC filter's name in the chain
	// (and the key of its per-route configuration).
	rateLimitExemptFilter = "ingress-xds.rate-limit-exempt"
	// RBAC's dynamic metadata: its namespace (the RBAC filter's
	// canonical name, whatever the instance is called) and the key of
	// the shadow rules' verdict, "allowed" or "denied".
	rbacMetadata      = "envoy.filters.http.rbac"
	rbacShadowVerdict = "shadow_engine_result"

	// The descriptor entries' keys.
	rateKey    = "ingress-xds.rate"
	exemptKey  = "ingress-xds.exempt"
	addressKey = "remote_address" // the remote_address action's key

	// maxClientsPerRoute bounds the client buckets a route keeps, per
	// rate; past it the least recently seen client is forgotten (as
	// nginx forgets when its zone is full). The annotations' notes
	// (keys_ratelimit.go) quote it.
	maxClientsPerRoute = 10_000
)

// rateLimitStatPrefix prefixes every route's rate limit statistics:
// http.<listener>.rate_limit.http_local_rate_limit.rate_limited and such.
const rateLimitStatPrefix = "rate_limit"

// rateLimitListenerConfig is the listener-wide rate limit: none (no token
// bucket, enforced for no request); each route has its own.
func rateLimitListenerConfig() proto.Message {
	return &localratelimitv3.LocalRateLimit{StatPrefix: rateLimitStatPrefix}
}

// rateLimitExemptListenerConfig is the listener-wide tagging filter: no
// rules at all, so it neither refuses nor tags; the routes' shadow rules
// tag.
func rateLimitExemptListenerConfig() proto.Message { return &rbacv3.RBAC{} }

// rateLimit renders a route's rate limit, and the shadow RBAC that tags
// its exempt clients (nil when there are none).
func rateLimit(r *ir.RateLimit) (*localratelimitv3.LocalRateLimit, *rbacv3.RBACPerRoute, error) {
	all := &corev3.RuntimeFractionalPercent{DefaultValue: &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED}}
	cfg := &localratelimitv3.LocalRateLimit{
		StatPrefix: rateLimitStatPrefix,
		Status:     &typev3.HttpStatus{Code: typev3.StatusCode(r.Status)},
		// The route's default bucket takes the requests no descriptor
		// matched: only exempt clients'. Envoy needs one; no client can
		// empty this one.
		TokenBucket: &typev3.TokenBucket{
			MaxTokens:     math.MaxUint32,
			TokensPerFill: wrapperspb.UInt32(math.MaxUint32),
			FillInterval:  durationpb.New(50 * time.Millisecond),
		},
		FilterEnabled:                   all,
		FilterEnforced:                  all,
		AlwaysConsumeDefaultTokenBucket: wrapperspb.Bool(false),
		MaxDynamicDescriptors:           wrapperspb.UInt32(maxClientsPerRoute),
	}
	for i, q := range r.Rates {
		rate := strconv.Itoa(i)
		actions := []*routev3.RateLimit_Action{{ActionSpecifier: &routev3.RateLimit_Action_GenericKey_{
			GenericKey: &routev3.RateLimit_Action_GenericKey{DescriptorKey: rateKey, DescriptorValue: rate},
		}}}
		entries := []*ratelimitv3.RateLimitDescriptor_Entry{{Key: rateKey, Value: rate}}
		if len(r.Exempt) > 0 {
			actions = append(actions, &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_Metadata{
				Metadata: &routev3.RateLimit_Action_MetaData{
					DescriptorKey: exemptKey,
					MetadataKey:   &metadatav3.MetadataKey{Key: rbacMetadata, Path: []*metadatav3.MetadataKey_PathSegment{{Segment: &metadatav3.MetadataKey_PathSegment_Key{Key: rbacShadowVerdict}}}},
					// Without the tag (the tagging filter did not run)
					// the client is limited: fail closed.
					DefaultValue: "denied",
					Source:       routev3.RateLimit_Action_MetaData_DYNAMIC,
				},
			}})
			entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: exemptKey, Value: "denied"})
		}
		actions = append(actions, &routev3.RateLimit_Action{ActionSpecifier: &routev3.RateLimit_Action_RemoteAddress_{
			RemoteAddress: &routev3.RateLimit_Action_RemoteAddress{},
		}})
		// No value: a bucket for each address.
		entries = append(entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: addressKey})
		cfg.RateLimits = append(cfg.RateLimits, &routev3.RateLimit{Actions: actions})
		cfg.Descriptors = append(cfg.Descriptors, &ratelimitv3.LocalRateLimitDescriptor{
			Entries:     entries,
			TokenBucket: tokenBucket(q),
		})
	}
	if len(r.Exempt) == 0 {
		return cfg, nil, nil
	}
	exempt, err := anyAddress(r.Exempt)
	if err != nil {
		return nil, nil, fmt.Errorf("rate limit exemptions: %w", err)
	}
	tag := &rbacv3.RBACPerRoute{Rbac: &rbacv3.RBAC{ShadowRules: &rbacconfigv3.RBAC{
		Action: rbacconfigv3.RBAC_ALLOW,
		Policies: map[string]*rbacconfigv3.Policy{"exempt": {
			Permissions: []*rbacconfigv3.Permission{{Rule: &rbacconfigv3.Permission_Any{Any: true}}},
			Principals:  []*rbacconfigv3.Principal{exempt},
		}},
	}}}
	return cfg, tag, nil
}

// tokenBucket is a rate's bucket: Envoy's local rate limit refills it
// continuously at tokens_per_fill per fill_interval, as nginx's leaky
// bucket drains.
func tokenBucket(q ir.RequestRate) *typev3.TokenBucket {
	return &typev3.TokenBucket{
		MaxTokens:     q.Bucket,
		TokensPerFill: wrapperspb.UInt32(q.Requests),
		FillInterval:  durationpb.New(time.Duration(q.Period)),
	}
}

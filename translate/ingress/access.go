package ingress

import (
	"math"
	"slices"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// limitStatus is ingress-nginx's limit-req-status-code default
// (internal/ingress/controller/config/config.go).
const limitStatus = 503

// accessConfig is what the source ranges and rate limits ask; nil: none.
type accessConfig struct {
	ipRules   *ir.IPRules
	rateLimit *ir.RateLimit
}

// parseAccess reads ingress-nginx's source ranges and rate limits. Values
// that do not parse are problems already, and those of the source ranges
// and rates refuse the Ingress (annotations/refusal.go), so nothing here
// serves a path more openly than asked.
func parseAccess(values *annotations.Values, opts *Options) accessConfig {
	var c accessConfig
	allow, _ := annotations.AllowlistSourceRange.Get(values)
	deny, _ := annotations.DenylistSourceRange.Get(values)
	if block := opts.config.blockCIDRs(); len(block) > 0 {
		// The ConfigMap's block-cidrs: denied on every route, whatever
		// the Ingress's own ranges (configmap/keys.go says the difference).
		deny = append(slices.Clip(deny), block...)
	}
	if len(allow) > 0 || len(deny) > 0 {
		c.ipRules = &ir.IPRules{Allow: allow, Deny: deny}
	}

	mult, ok := annotations.LimitBurstMultiplier.Get(values)
	if !ok {
		mult = annotations.DefaultBurstMultiplier
	}
	var rates []ir.RequestRate
	// ingress-nginx's order: limit-rpm, then limit-rps.
	if rpm, _ := annotations.LimitRPM.Get(values); rpm > 0 {
		rates = append(rates, requestRate(rpm, time.Minute, mult))
	}
	if rps, _ := annotations.LimitRPS.Get(values); rps > 0 {
		rates = append(rates, requestRate(rps, time.Second, mult))
	}
	if len(rates) > 0 {
		// A limit-allowlist that does not parse is reported and leaves
		// everyone limited: the safer way to be wrong.
		exempt, _ := annotations.LimitAllowlist.Get(values)
		c.rateLimit = &ir.RateLimit{Rates: rates, Exempt: exempt, Status: opts.config.limitStatus()}
	}
	return c
}

// requestRate is nginx's limit_req rate=n/period burst=n*mult nodelay as a
// token bucket: nginx lets a new client's first request and burst more
// through at once, then one per period/n, so the bucket holds burst+1.
// Beyond what a bucket can count the bound is Envoy's largest.
func requestRate(n int, period time.Duration, mult int) ir.RequestRate {
	bucket := min(uint64(n)*uint64(mult)+1, math.MaxUint32)
	return ir.RequestRate{Requests: uint32(min(uint64(n), math.MaxUint32)), Period: ir.Duration(period), Bucket: uint32(bucket)}
}

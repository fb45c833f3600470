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

// accessAnnotations reads ingress-nginx's source ranges and rate limits
// into p. Values that do not parse are problems already, and those of the
// source ranges and rates refuse the Ingress (annotations/refusal.go), so
// nothing here serves a path more openly than asked.
func (f *fragmentBuilder) accessAnnotations(values *annotations.Values, p *ir.RoutePolicy) {
	allow, _ := annotations.AllowlistSourceRange.Get(values)
	deny, _ := annotations.DenylistSourceRange.Get(values)
	if block := f.opts.config.blockCIDRs(); len(block) > 0 {
		// The ConfigMap's block-cidrs: denied on every route, whatever
		// the Ingress's own ranges (configmap/keys.go says the difference).
		deny = append(slices.Clip(deny), block...)
	}
	if len(allow) > 0 || len(deny) > 0 {
		p.IPRules = &ir.IPRules{Allow: allow, Deny: deny}
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
		p.RateLimit = &ir.RateLimit{Rates: rates, Exempt: exempt, Status: f.opts.config.limitStatus()}
	}
}

// requestRate is nginx's limit_req rate=n/period burst=n*mult nodelay as a
// token bucket: nginx lets a new client's first request and burst more
// through at once, then one per period/n, so the bucket holds burst+1.
// Beyond what a bucket can count the bound is Envoy's largest.
func requestRate(n int, period time.Duration, mult int) ir.RequestRate {
	bucket := min(uint64(n)*uint64(mult)+1, math.MaxUint32)
	return ir.RequestRate{Requests: uint32(min(uint64(n), math.MaxUint32)), Period: ir.Duration(period), Bucket: uint32(bucket)}
}

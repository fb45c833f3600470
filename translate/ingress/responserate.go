package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseResponseRate reads limit-rate (nil: none): nginx's limit_rate
// <n>k, each response paced at n KiB/s; "0" (nginx's default) leaves the
// responses at full speed. limit-rate-after <a> is nginx's
// limit_rate_after <a>k, which without a rate does nothing, as in nginx.
func parseResponseRate(values *annotations.Values) *ir.ResponseRate {
	if k, _ := annotations.LimitRate.Get(values); k > 0 {
		after, _ := annotations.LimitRateAfter.Get(values)
		return &ir.ResponseRate{KiBPerSecond: uint64(k), AfterKiB: uint64(max(after, 0))}
	}
	return nil
}

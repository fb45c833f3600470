package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// responseRateAnnotations reads limit-rate into p: nginx's limit_rate
// <n>k, each response paced at n KiB/s; "0" (nginx's default) leaves the
// responses at full speed. limit-rate-after is refused by the registry
// (keys_ratelimit.go says why), so a route paced here never has one.
func (f *fragmentBuilder) responseRateAnnotations(values *annotations.Values, p *ir.RoutePolicy) {
	if k, _ := annotations.LimitRate.Get(values); k > 0 {
		p.ResponseRate = &ir.ResponseRate{KiBPerSecond: uint64(k)}
	}
}

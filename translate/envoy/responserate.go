package envoy

import (
	commonfaultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/common/fault/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A route's response rate (ir.ResponseRate, limit-rate) is Envoy's fault
// filter with only its response rate limit: each request's response body
// is paced on its own at the rate, as nginx's limit_rate paces each
// request. Envoy's bandwidth_limit filter would be the obvious choice, but
// its bucket is the route's, shared by every request on it. The fault
// filter is configured with no delay and no abort, and with a fixed limit
// rather than a header one, so that no header of the client's
// (x-envoy-fault-*) can change what it does.
const responseRateFilter = "envoy.filters.http.fault"

// responseRateListenerConfig is the listener-wide entry: no fault at all.
// The filter is disabled there, and a route with a rate turns it on with
// its own configuration, which replaces this one.
func responseRateListenerConfig() proto.Message { return &faultv3.HTTPFault{} }

// responseRate is a route's fault filter configuration: every response
// paced at the rate. The percentage must be written out: its default is
// none.
func responseRate(r *ir.ResponseRate) *faultv3.HTTPFault {
	return &faultv3.HTTPFault{ResponseRateLimit: &commonfaultv3.FaultRateLimit{
		LimitType: &commonfaultv3.FaultRateLimit_FixedLimit_{FixedLimit: &commonfaultv3.FaultRateLimit_FixedLimit{
			LimitKbps: r.KiBPerSecond,
		}},
		Percentage: &typev3.FractionalPercent{Numerator: 100, Denominator: typev3.FractionalPercent_HUNDRED},
	}}
}

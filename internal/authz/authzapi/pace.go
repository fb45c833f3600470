package authzapi

// The response pace of limit-rate with limit-rate-after is the service's
// ext_proc server too: Envoy opens a stream per request of such a route
// (a filter instance of its own, which streams the response's body), with
// these gRPC metadata keys. The service answers each body chunk once
// nginx's limit_rate would have sent it: the first PaceAfter bytes at
// once, then PaceRate bytes per second, counted from the request's start
// plus one second.
const (
	// PaceRate is the pace in bytes per second, a decimal number from 1.
	PaceRate = "ingress-xds-pace-rate"
	// PaceAfter is how many bytes go before the pace applies, a decimal
	// number (0: none).
	PaceAfter = "ingress-xds-pace-after"
)

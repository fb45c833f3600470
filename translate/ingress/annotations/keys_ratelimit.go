package annotations

// ingress-nginx's rate-limit keys (its RateLimit group): how many requests
// each client address may send, per Envoy as ingress-nginx's are per
// replica. translate/ingress/access.go applies them, translate/envoy/
// ratelimit.go renders them as Envoy's local rate limit with a token bucket
// per client address; limit-connections is counted by the authorisation
// service over Envoy's ext_proc (translate/envoy/connlimit.go,
// internal/authz/connlimit.go); limit-rate is Envoy's fault filter's pace
// per response (translate/envoy/responserate.go). The keys Envoy cannot apply as nginx does are
// refused: an Ingress carrying them is not served (refusal.go).

// DefaultBurstMultiplier is limit-burst-multiplier's default, ingress-nginx's
// (internal/ingress/annotations/ratelimit: defBurst).
const DefaultBurstMultiplier = 5

// rateNote is what limit-rps and limit-rpm share.
const rateNote = `Each client address has a token bucket per route, as nginx's limit_req with burst and nodelay has a leaky bucket ` +
	`per address: the bucket holds the rate times limit-burst-multiplier, plus one, requests, and refills continuously at the rate; ` +
	`a request finding it empty gets 503 (ingress-nginx's limit-req-status-code). Differences: nginx's zone is the Ingress's, ` +
	`shared by all its paths, where Envoy keeps a bucket per route (each path of the Ingress on each host, over HTTP and ` +
	`over HTTPS apart), so a client may reach the rate on each; and Envoy remembers the last 10,000 clients of each route (nginx's 5 MB zone, about 80,000 ` +
	`per Ingress), forgetting the one seen least recently, as nginx does when its zone is full; and the buckets start full ` +
	`again whenever Envoy's route configuration changes (an Ingress added, removed or changed in a way that changes routes; ` +
	`endpoint changes do not), where nginx keeps its zones across reloads. ` + clientAddressNote

// LimitRPS bounds each client's requests per second.
var LimitRPS = key[int](&definition{
	name:    "limit-rps",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Requests per second each client address may send to each of the Ingress's paths, with a burst of limit-burst-multiplier times as many; beyond, 503. "0": no limit.`,
	verdict: HonouredWithDifference,
	note:    rateNote,
}, parseNonNegative)

// LimitRPM bounds each client's requests per minute.
var LimitRPM = key[int](&definition{
	name:    "limit-rpm",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Requests per minute each client address may send, with a burst of limit-burst-multiplier times as many; beyond, 503. "0": no limit. With limit-rps, both apply.`,
	verdict: HonouredWithDifference,
	note: rateNote + ` With both keys, a request must find a token in both buckets; one refused by the per-second bucket may ` +
		`still have spent its token of the per-minute one, where nginx spends none.`,
}, parseNonNegative)

// LimitBurstMultiplier sizes the burst of limit-rps and limit-rpm.
var LimitBurstMultiplier = key[int](&definition{
	name:  "limit-burst-multiplier",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The burst of limit-rps and limit-rpm, as a multiple of the rate ("5", the default): requests a client may send at once beyond the rate.`,
}, parseNonNegative)

// LimitAllowlist exempts client ranges from the rate limits.
var LimitAllowlist = key[[]string](&definition{
	name:    "limit-allowlist",
	aliases: []string{"limit-whitelist"},
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Client addresses never limited by limit-rps, limit-rpm and limit-connections: CIDRs and single addresses, IPv4 or IPv6, comma separated.`,
	verdict: HonouredWithDifference,
	note: `A shadow RBAC filter ahead of the rate limit tags the request when its client is in the ranges, and a tagged request ` +
		`takes no token; the service counting limit-connections never counts them. A value that does not parse is reported and ignored: every client is limited (ingress-nginx drops the ` +
		`rate limits instead). ` + clientAddressNote,
}, parseCIDRs)

// LimitConnections bounds each client's requests in flight.
var LimitConnections = key[int](&definition{
	name:    "limit-connections",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Requests each client address may have in flight at once on the Ingress's paths (nginx's limit_conn); beyond, 503. "0": no limit.`,
	verdict: HonouredWithDifference,
	note: `Envoy has no count of requests in flight per client address, so the authorisation service beside each Envoy ` +
		`(ingress-xds authz) counts them: Envoy's ext_proc filter, on the Ingress's routes only, opens a stream to it for each ` +
		`request, with the client's address, and keeps it until the response has ended or the request was reset (a client gone ` +
		`mid-request leaves the count); a request that would make one more than the limit gets 503 (ingress-nginx's ` +
		`limit-conn-status-code) and is not counted. As nginx's zone, the count is the Ingress's, shared by all its paths ` +
		`(over HTTP and HTTPS), per Envoy, and over HTTP/2 each stream counts; limit-allowlist's clients are never counted; ` +
		`the limit applies after limit-rps and limit-rpm, so a request they refuse is not counted, as nginx's limit_req runs ` +
		`before its limit_conn. Differences: these routes put the service on the request path (a loopback gRPC stream per ` +
		`request, docs/benchmarks.md); when it is down or does not answer in 5 s the request gets 503, never the backend; and the counts start from zero when the service restarts, as nginx's when it restarts (not on reloads). ` +
		clientAddressNote,
}, parseNonNegative)

// limitRateNote says how limit-rate differs from nginx's limit_rate.
const limitRateNote = `Envoy's fault filter paces each response body (envoy.filters.http.fault, its response_rate_limit: no ` +
	`delay or abort, and no header of the client's changes it), per request as nginx's limit_rate is: two responses at once ` +
	`get the rate each. Differences: Envoy paces from the response's first byte, in sixteenths of a second, where nginx ` +
	`lets a response have the rate times the seconds since the request began, plus one: nginx sends the first second's worth ` +
	`at once (a response takes up to a second longer through Envoy), and the time the backend took to answer is credit ` +
	`nginx spends at once, where Envoy never sends ahead of the pace; nginx ` +
	`counts the response's headers, Envoy its body only; and ingress-nginx says the key needs proxy-buffering: on, where ` +
	`Envoy paces either way. limit-allowlist does not exempt anyone, as in nginx. "0": no limit. The ConfigMap's ` +
	`limit-rate is the default. With limit-rate-after, the authorisation service paces instead (see that key).`

// LimitRate slows each response.
var LimitRate = key[int](&definition{
	name:    "limit-rate",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Kilobytes (1,024 bytes) per second each response is sent at, at most (nginx's limit_rate); "0": no limit.`,
	verdict: HonouredWithDifference,
	note:    limitRateNote,
}, parseNonNegative)

// LimitRateAfter lets a response's first kilobytes go unslowed.
var LimitRateAfter = key[int](&definition{
	name:    "limit-rate-after",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Kilobytes of each response sent at full speed before limit-rate applies (nginx's limit_rate_after); without limit-rate, nothing.`,
	verdict: HonouredWithDifference,
	note: `Envoy's fault filter, which paces limit-rate's responses, has no amount at full speed first, so a route with both ` +
		`is paced by the authorisation service beside each Envoy (ingress-xds authz) instead: an ext_proc filter of its own ` +
		`streams the response's body to the service a chunk at a time, and Envoy forwards each chunk once the service answers, ` +
		`when nginx's limit_rate would have sent it (the rate times the seconds since the request began, plus one, plus ` +
		`limit-rate-after's kilobytes). Differences: the service is on the response path of those routes (a loopback round ` +
		`trip per chunk); a chunk waits whole where nginx sends the part within the allowance, so a response is never faster ` +
		`than nginx's but may end a little later; the response's headers are not counted, as nginx counts them; a chunk that ` +
		`would wait more than 5 minutes ends the response (Envoy's default stream idle timeout would too); when the service ` +
		`cannot be asked the request gets 503, never an unpaced response. The ConfigMap's limit-rate-after is the default.`,
}, parseNonNegative)

// rateLimitKeys lists the keys of this file, for table.
func rateLimitKeys() []*definition {
	return []*definition{
		LimitRPS.def, LimitRPM.def, LimitBurstMultiplier.def, LimitAllowlist.def,
		LimitConnections.def, LimitRate.def, LimitRateAfter.def,
	}
}

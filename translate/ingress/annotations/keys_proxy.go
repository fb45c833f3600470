package annotations

import "time"

// ingress-nginx's proxy keys (its Proxy and ClientBodyBufferSize groups):
// timeouts, retries and the request body's size, with the meaning
// ingress-nginx gives them. The buffer sizes of nginx's response buffering
// have no counterpart in Envoy, which streams with flow control; they are
// known, so that they are not reported as unsupported, and ignored.

// ProxyConnectTimeout bounds connecting to a backend endpoint.
var ProxyConnectTimeout = key[time.Duration](&definition{
	name:  "proxy-connect-timeout",
	under: Nginx,
	scope: ScopeCluster,
	doc: `Seconds ("5") to wait for a connection to a backend endpoint, as nginx's proxy_connect_timeout. It is the connect timeout ` +
		`of the cluster the Ingress's routes send to: a cluster of that Service port with this policy, shared by every route asking the same. ` +
		`A connection that times out is retried (proxy-next-upstream), and when no try connects the client gets 504, as from nginx.`,
}, parseSeconds)

// ProxyReadTimeout bounds the time between two reads from the backend.
var ProxyReadTimeout = key[time.Duration](&definition{
	name:    "proxy-read-timeout",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Seconds ("60") the backend may stay silent between two reads of its response, as nginx's proxy_read_timeout; a response may take longer in all.`,
	verdict: HonouredWithDifference,
	note: `The route's total timeout (Envoy's default 15 s) is turned off and its stream idle timeout takes the value, so a slow response ` +
		`that never pauses longer is served whole. Envoy's idle timer counts bytes in either direction, and with proxy-send-timeout also set ` +
		`the larger of the two bounds both. A pause before the response starts gets 504, as from nginx; a pause after it has started ends ` +
		`the stream (the client gets a truncated response), as nginx closes the connection.`,
}, parseSeconds)

// ProxySendTimeout bounds the time between two writes to the backend.
var ProxySendTimeout = key[time.Duration](&definition{
	name:    "proxy-send-timeout",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Seconds ("60") the backend may take to accept the next part of the request, as nginx's proxy_send_timeout.`,
	verdict: HonouredWithDifference,
	note:    `As proxy-read-timeout: the route's stream idle timeout, the larger of the two when both are set, and no total timeout.`,
}, parseSeconds)

// ProxyNextUpstream lists when a failed request is passed to another
// endpoint.
var ProxyNextUpstream = key[[]string](&definition{
	name:  "proxy-next-upstream",
	under: Nginx,
	scope: ScopeRoute,
	doc: `When a request is retried on another endpoint, in nginx's words ("error timeout http_502"; "off": never). ` +
		`As in ingress-nginx, which applies "error timeout" with 3 tries to every location, every forwarding route retries by default: ` +
		`a connection that fails (refused, reset, timed out) before a response is tried again on another endpoint, up to 3 tries in all, ` +
		`a POST, LOCK or PATCH only when it was not sent (the connection refused or timed out). Setting it or proxy-next-upstream-tries (here or as the ConfigMap key) changes that, ` +
		`the other keeping ingress-nginx's default; "off", or 1 try, turns retries off.`,
	verdict: HonouredWithDifference,
	note: `Each word becomes an Envoy retry condition: error and invalid_header → connect-failure, reset (and refused-stream); ` +
		`timeout → connect-failure, reset (a connect timeout is retried; Envoy's stream idle timeout, which carries proxy-read-timeout, ` +
		`ends the request without a retry); http_500, http_502, http_503, http_504, http_403, http_404, http_429 → retriable-status-codes ` +
		`with those codes; off → no retries. As in nginx, a POST, LOCK or PATCH once sent is not retried unless non_idempotent is given, or the ConfigMap's retry-non-idempotent is true ` +
		`(one whose connection failed, or was reset before the request went out, is), and a retry goes to another endpoint than those already tried.`,
}, parseNextUpstream)

// ProxyNextUpstreamTries bounds the tries of a request, the first
// included.
var ProxyNextUpstreamTries = key[int](&definition{
	name:    "proxy-next-upstream-tries",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `How many endpoints a request may be tried on in all, the first try included ("3", ingress-nginx's default): Envoy retries it that number less one times.`,
	verdict: HonouredWithDifference,
	note: `nginx's 0 (no limit) cannot be said to Envoy, which needs a number: it is reported and the default of 3 kept. ` +
		`Envoy also bounds the retries in flight to a cluster at once (3, its circuit breaker's default).`,
}, parseNonNegative)

// ProxyNextUpstreamTimeout is known and ignored.
var ProxyNextUpstreamTimeout = key[int](&definition{
	name:    "proxy-next-upstream-timeout",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `Seconds during which a request may still be passed to another endpoint (nginx's proxy_next_upstream_timeout).`,
	verdict: Ignored,
	note: `Envoy has no window after which a retry may no longer start: its retries are bounded by their number ` +
		`(proxy-next-upstream-tries) and by the route's timeouts.`,
}, parseNonNegative)

// ProxyBodySize bounds the request body.
var ProxyBodySize = key[int64](&definition{
	name:    "proxy-body-size",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The largest request body ("1m", "8k", "0": no limit), as nginx's client_max_body_size: a larger one gets 413.`,
	verdict: HonouredWithDifference,
	note: `Envoy's buffer filter enforces it, holding the body (up to the limit) until it is whole before forwarding it, as nginx does ` +
		`with proxy-request-buffering on, its default. With proxy-request-buffering off the body streams and the limit is not enforced: ` +
		`Envoy can bound a body only by buffering it. Envoy buffers at most 4 GiB: a larger limit is none. Without the key, Envoy sets ` +
		`no limit (nginx's default is 1m), unless serve --nginx-defaults (on when serve takes over ingress-nginx's class) gives it.`,
}, parseOffset)

// ProxyRequestBuffering says whether the request body is buffered before
// it is forwarded.
var ProxyRequestBuffering = key[bool](&definition{
	name:    "proxy-request-buffering",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"off": the request body streams to the backend as it arrives; "on" (the default): it is read whole first.`,
	verdict: HonouredWithDifference,
	note: `"on" (the default) buffers wherever proxy-body-size gives the buffer a size: ingress-nginx's 1m under serve --nginx-defaults ` +
		`(on when serve takes over ingress-nginx's class), the ConfigMap's, or the annotation's; a slow client then never holds a backend ` +
		`connection. Envoy holds the body in memory, where nginx spools what passes client-body-buffer-size to disk, so it cannot buffer ` +
		`a body without a bound: with proxy-body-size "0", or without the key and without --nginx-defaults, the body streams. "off" ` +
		`streams, and then proxy-body-size is not enforced.`,
}, parseOnOff)

// ProxyHTTPVersion is the HTTP version spoken to the backend.
var ProxyHTTPVersion = key[string](&definition{
	name:    "proxy-http-version",
	under:   Nginx,
	scope:   ScopeCluster,
	doc:     `The HTTP version spoken to the backend: "1.1" (the default) or "1.0".`,
	verdict: HonouredWithDifference,
	note:    `"1.1" is what Envoy speaks. Envoy cannot send HTTP/1.0 requests to a backend: "1.0" is reported (UnsupportedAnnotationValue) and HTTP/1.1 is used.`,
}, parseOneOf("1.0", "1.1"))

// ignoredBuffer is a key of nginx's buffers, which Envoy has no use for.
func ignoredBuffer[T any](name, doc, note string, parse func(string) (T, error)) Key[T] {
	return key(&definition{name: name, under: Nginx, scope: ScopeRoute, doc: doc, verdict: Ignored, note: note}, parse)
}

const streamsNote = `Envoy streams responses to the client with flow control, holding no more than its buffer limits: there is no response buffer to turn on, size or spill to a file.`

// The keys of nginx's buffers, known and ignored.
var (
	ProxyBuffering       = ignoredBuffer("proxy-buffering", `"on": nginx reads the whole response into buffers before sending it; "off" (ingress-nginx's default): it streams.`, streamsNote+` Responses stream, as with "off".`, parseOnOff)
	ProxyBufferSize      = ignoredBuffer("proxy-buffer-size", `The size of nginx's buffer for the first part of a response (its headers).`, streamsNote, parseSize)
	ProxyBuffersNumber   = ignoredBuffer("proxy-buffers-number", `The number of nginx's response buffers.`, streamsNote, parseCount)
	ProxyBusyBuffersSize = ignoredBuffer("proxy-busy-buffers-size", `How much of nginx's response buffers may be busy sending to the client.`, streamsNote, parseSize)
	ProxyMaxTempFile     = ignoredBuffer("proxy-max-temp-file-size", `The largest temporary file nginx writes a buffered response to.`, streamsNote, parseOffset)
	ClientBodyBufferSize = ignoredBuffer("client-body-buffer-size", `The part of a request body nginx holds in memory before writing the rest to a temporary file.`,
		`Envoy holds what it buffers of a request body in memory (proxy-body-size bounds it) and has no file to spill to.`, parseSize)
)

// proxyKeys lists the keys of this file, for table.
func proxyKeys() []*definition {
	return []*definition{
		ProxyConnectTimeout.def, ProxyReadTimeout.def, ProxySendTimeout.def,
		ProxyNextUpstream.def, ProxyNextUpstreamTries.def, ProxyNextUpstreamTimeout.def,
		ProxyBodySize.def, ProxyRequestBuffering.def, ProxyHTTPVersion.def,
		ProxyBuffering.def, ProxyBufferSize.def, ProxyBuffersNumber.def, ProxyBusyBuffersSize.def, ProxyMaxTempFile.def,
		ClientBodyBufferSize.def,
	}
}

package ingress

import (
	"math"
	"slices"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// defaultNextUpstreamTries is ingress-nginx's proxy-next-upstream-tries
// (internal/ingress/controller/config/config.go).
const defaultNextUpstreamTries = 3

// defaultNextUpstream is ingress-nginx's proxy-next-upstream (config.go:
// ProxyNextUpstream "error timeout"), which it applies to every location.
func defaultNextUpstream() []string { return []string{"error", "timeout"} }

// defaultRetries are ingress-nginx's retries, which every forwarding route
// has unless proxy-next-upstream or proxy-next-upstream-tries (annotation
// or ConfigMap key) says otherwise: a failed connection or a reset before
// the response is tried again on another endpoint, up to 3 tries in all,
// POST, LOCK and PATCH only when they were not sent, unless
// retryNonIdempotent (the ConfigMap's retry-non-idempotent).
func defaultRetries(retryNonIdempotent bool) *ir.Retries {
	return nextUpstream(withNonIdempotent(defaultNextUpstream(), retryNonIdempotent), defaultNextUpstreamTries)
}

// withNonIdempotent is words with non_idempotent when retryNonIdempotent
// (the ConfigMap's retry-non-idempotent), as nginx.tmpl's
// buildNextUpstream (internal/ingress/controller/template/template.go)
// adds it to every location's proxy_next_upstream.
func withNonIdempotent(words []string, retryNonIdempotent bool) []string {
	if !retryNonIdempotent || slices.Contains(words, "non_idempotent") {
		return words
	}
	return append(slices.Clip(words), "non_idempotent")
}

// proxyConfig is what ingress-nginx's proxy keys ask: timeouts, retries
// and the request body's bound of the routes, the connect timeout of the
// cluster (merge.go puts each in its place).
type proxyConfig struct {
	timeouts    *ir.Timeouts
	retries     *ir.Retries // nil: none
	requestBody *ir.RequestBody
	// connectTimeout is the cluster's; 0: the renderer's default.
	connectTimeout ir.Duration
}

// parseProxy reads ingress-nginx's proxy keys, under the ConfigMap's
// retry-non-idempotent. docs/annotations.md says how each maps and where
// it differs.
func parseProxy(values *annotations.Values, retryNonIdempotent bool) (proxyConfig, []problem) {
	var c proxyConfig
	var problems []problem
	// nginx bounds the pauses between reads (and writes), never the
	// whole exchange: no total timeout, the pause bound as idle timeout.
	read, readSet := annotations.ProxyReadTimeout.Get(values)
	send, sendSet := annotations.ProxySendTimeout.Get(values)
	if readSet || sendSet {
		c.timeouts = &ir.Timeouts{Request: 0, Idle: ir.Duration(max(read, send))}
	}

	words, wordsSet := annotations.ProxyNextUpstream.Get(values)
	tries, triesSet := annotations.ProxyNextUpstreamTries.Get(values)
	if triesSet && tries == 0 {
		problems = append(problems, problemf("UnsupportedAnnotationValue", "annotation %s=\"0\" (no limit) cannot be said to Envoy, which needs a number of retries: %d tries, ingress-nginx's default, are used",
			annotations.ProxyNextUpstreamTries.Name(), defaultNextUpstreamTries))
		tries = defaultNextUpstreamTries
	}
	// ingress-nginx retries every location by default: what is not set
	// takes its default, and only off or 1 try turns retries off.
	switch {
	case !wordsSet && !triesSet:
		c.retries = defaultRetries(retryNonIdempotent)
	default:
		if !wordsSet {
			words = defaultNextUpstream()
		}
		if !triesSet {
			tries = defaultNextUpstreamTries
		}
		c.retries = nextUpstream(withNonIdempotent(words, retryNonIdempotent), tries)
	}

	if size, ok := annotations.ProxyBodySize.Get(values); ok && size > 0 && size <= math.MaxUint32 {
		// Envoy bounds a body only by buffering it: where nginx streams
		// (proxy-request-buffering off), so does Envoy, unbounded.
		if buffering, set := annotations.ProxyRequestBuffering.Get(values); !set || buffering {
			c.requestBody = &ir.RequestBody{MaxBytes: uint32(size)}
		}
	}

	if v, ok := annotations.ProxyHTTPVersion.Get(values); ok && v == "1.0" {
		problems = append(problems, problemf("UnsupportedAnnotationValue", "annotation %s=\"1.0\": Envoy speaks HTTP/1.1 to backends, never HTTP/1.0: HTTP/1.1 is used",
			annotations.ProxyHTTPVersion.Name()))
	}

	if d, ok := annotations.ProxyConnectTimeout.Get(values); ok {
		// connect_timeout is a cluster's, never a route's.
		c.connectTimeout = ir.Duration(d)
	}
	return c, problems
}

// nextUpstream maps nginx's proxy_next_upstream words and tries to Envoy's
// retries: nil when nothing is retried.
func nextUpstream(words []string, tries int) *ir.Retries {
	if tries <= 1 || slices.Contains(words, "off") {
		return nil
	}
	// nginx never passes these methods to another server once sent,
	// unless told non_idempotent.
	r := &ir.Retries{Attempts: uint32(tries - 1), NotMethods: []string{"POST", "LOCK", "PATCH"}}
	var conn bool
	for _, w := range words {
		switch w {
		case "error", "timeout", "invalid_header":
			// Failing to connect (or timing out connecting), a reset
			// or a response Envoy cannot read.
			conn = true
		case "non_idempotent":
			r.NotMethods = nil
		default: // http_NNN
			r.StatusCodes = append(r.StatusCodes, statusOf(w))
		}
	}
	if conn {
		r.On = append(r.On, "connect-failure", "refused-stream", "reset")
	}
	if len(r.StatusCodes) > 0 {
		slices.Sort(r.StatusCodes)
		r.On = append(r.On, "retriable-status-codes")
	}
	if len(r.On) == 0 {
		return nil // non_idempotent alone retries nothing
	}
	return r
}

// statusOf is the code of an http_NNN word (the parser admits no other).
func statusOf(word string) uint32 {
	var code uint32
	for _, c := range word[len("http_"):] {
		code = code*10 + uint32(c-'0')
	}
	return code
}

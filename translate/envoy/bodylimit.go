package envoy

import (
	bufferv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/buffer/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// bufferFilter bounds request bodies. Envoy has no other per-route bound
// on a request body: the buffer filter holds the body until it is whole
// and answers 413 once it grows past max_request_bytes (or at once, when
// Content-Length says it will).
const bufferFilter = "envoy.filters.http.buffer"

// bodyLimit is a route's configuration of the buffer filter.
func bodyLimit(b *ir.RequestBody) *bufferv3.BufferPerRoute {
	return &bufferv3.BufferPerRoute{Override: &bufferv3.BufferPerRoute_Buffer{Buffer: &bufferv3.Buffer{
		MaxRequestBytes: wrapperspb.UInt32(b.MaxBytes),
	}}}
}

// bufferListenerConfig is the filter's listener-wide entry. The entry is
// disabled (httpFilter.disabled): a route's own configuration turns it on
// for that route, and every other route streams its bodies unbounded. The
// bound here is never used, but Envoy requires one.
func bufferListenerConfig() *bufferv3.Buffer {
	return &bufferv3.Buffer{MaxRequestBytes: wrapperspb.UInt32(1)}
}

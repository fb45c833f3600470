package ingress

import (
	"reflect"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Each word of nginx's proxy_next_upstream becomes the Envoy retry
// conditions docs/annotations.md states, and tries count the first try.
func TestNextUpstreamMapping(t *testing.T) {
	notIdempotent := []string{"POST", "LOCK", "PATCH"}
	conn := []string{"connect-failure", "refused-stream", "reset"}
	for _, tc := range []struct {
		words []string
		tries int
		want  *ir.Retries
	}{
		{[]string{"error"}, 3, &ir.Retries{Attempts: 2, On: conn, NotMethods: notIdempotent}},
		{[]string{"timeout"}, 2, &ir.Retries{Attempts: 1, On: conn, NotMethods: notIdempotent}},
		{[]string{"invalid_header"}, 2, &ir.Retries{Attempts: 1, On: conn, NotMethods: notIdempotent}},
		{[]string{"error", "timeout", "http_502"}, 888888, &ir.Retries{Attempts: 888887,
			On: append(conn, "retriable-status-codes"), StatusCodes: []uint32{502}, NotMethods: notIdempotent}},
		{[]string{"http_504", "http_500", "http_503", "http_502", "http_403", "http_404", "http_429"}, 3, &ir.Retries{Attempts: 2,
			On: []string{"retriable-status-codes"}, StatusCodes: []uint32{403, 404, 429, 500, 502, 503, 504}, NotMethods: notIdempotent}},
		{[]string{"error", "non_idempotent"}, 3, &ir.Retries{Attempts: 2, On: conn}},
		// Nothing to retry on, or no try left after the first.
		{[]string{"non_idempotent"}, 3, nil},
		{[]string{"error", "off"}, 3, nil},
		{[]string{"off"}, 3, nil},
		{[]string{"error", "timeout"}, 1, nil},
	} {
		if got := nextUpstream(tc.words, tc.tries); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v, %d tries: %+v, want %+v", tc.words, tc.tries, got, tc.want)
		}
	}
}

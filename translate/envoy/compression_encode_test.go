package envoy

import (
	"reflect"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestCompressionLine: a setting comes back whole from the line a
// listener's gzipSet keeps it as, the clients it skips included, whatever
// its expression holds (spaces, the words the line uses).
func TestCompressionLine(t *testing.T) {
	for _, c := range []*ir.Compression{
		{Level: 5, MinLength: 256, ContentTypes: []string{"application/json", "text/html"}},
		{Level: 1, MinLength: 20, ContentTypes: []string{"*"}, SkipMSIE6: true},
		{Level: 9, ContentTypes: []string{"text/html"}, SkipUserAgent: `Google bot|skip-msie6 \d`},
		{Level: 2, MinLength: 1, ContentTypes: []string{"text/css", "text/html"}, SkipMSIE6: true, SkipUserAgent: "skip-ua:x"},
	} {
		got, err := decodeCompression(encodeCompression(c))
		if err != nil || !reflect.DeepEqual(got, c) {
			t.Errorf("%+v came back as %+v (%v)", c, got, err)
		}
	}
}

package envoy

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestLocalReplyConfig checks the mappers' order and which are made: the
// connect timeout's (UF and its details) before the other failures' (UF,
// UC, UR), and none for a code that would change nothing. Envoy's
// acceptance is the golden cases' (validated), what a client gets the e2e
// TestProxyAnnotations's.
func TestLocalReplyConfig(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codes *ir.LocalReplyCodes
		want  []uint32 // the mappers' statuses, in order
	}{
		{"none", nil, nil},
		{"nginx's", &ir.LocalReplyCodes{UpstreamFailure: 502, ConnectTimeout: 504}, []uint32{504, 502}},
		{"a timeout like any failure", &ir.LocalReplyCodes{UpstreamFailure: 502, ConnectTimeout: 502}, []uint32{502}},
		{"no timeout of its own", &ir.LocalReplyCodes{UpstreamFailure: 502}, []uint32{502}},
		{"the timeout alone", &ir.LocalReplyCodes{ConnectTimeout: 504}, []uint32{504}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := localReplyConfig(tc.codes)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint32
			for _, m := range cfg.GetMappers() {
				got = append(got, m.GetStatusCode().GetValue())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("mappers %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("mappers %v, want %v", got, tc.want)
				}
			}
			if len(got) > 0 && tc.codes.ConnectTimeout != 0 && tc.codes.ConnectTimeout != tc.codes.UpstreamFailure &&
				cfg.GetMappers()[0].GetFilter().GetAndFilter() == nil {
				t.Errorf("the connect timeout's mapper does not check the details: %v", cfg.GetMappers()[0])
			}
		})
	}
}

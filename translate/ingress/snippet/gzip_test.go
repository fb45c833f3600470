package snippet

import (
	"reflect"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint32{"0": 0, "256": 256, "1k": 1024, "2K": 2048, "1m": 1 << 20, "1g": 1 << 30} {
		if got, ok := ParseSize(in); !ok || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "k", "-1", "1.5k", "4g", "1t", "99999999999"} {
		if got, ok := ParseSize(in); ok {
			t.Errorf("ParseSize(%q) = %d, want refused", in, got)
		}
	}
}

func TestGzipTypes(t *testing.T) {
	got, _, ok := GzipTypes([]string{"text/plain", "Application/JSON", "text/html", "text/plain"})
	if want := []string{"application/json", "text/html", "text/plain"}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("GzipTypes = %v, %v; want %v", got, ok, want)
	}
	if got, _, ok := GzipTypes([]string{"text/css", "*"}); !ok || !reflect.DeepEqual(got, []string{"*"}) {
		t.Errorf("GzipTypes with * = %v, %v; want [*]", got, ok)
	}
	if _, bad, ok := GzipTypes([]string{"text/css", "text/html;charset=utf-8"}); ok || bad != "text/html;charset=utf-8" {
		t.Errorf("GzipTypes took %q", bad)
	}
}

// TestGzipInheritance: a location's gzip directives override the
// server's, which override the http block's, each on its own, and nginx's
// defaults fill in what none sets (ngx_http_gzip_merge_conf).
func TestGzipInheritance(t *testing.T) {
	on, off := true, false
	n := uint32(1000)
	http := Gzip{On: &on, Level: 1, MinLength: new(uint32(256)), Types: []string{"text/css", "text/html"}}
	for _, tc := range []struct {
		name             string
		location, server Gzip
		http             Gzip
		want             *ir.Compression
	}{
		{"http alone", Gzip{}, Gzip{}, http, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: []string{"text/css", "text/html"}}},
		{"off in the server", Gzip{}, Gzip{On: &off}, http, nil},
		{"on again in the location", Gzip{On: &on}, Gzip{On: &off}, http, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: []string{"text/css", "text/html"}}},
		{"the location's length, the server's level", Gzip{MinLength: &n}, Gzip{Level: 6}, http, &ir.Compression{Level: 6, MinLength: 1000, ContentTypes: []string{"text/css", "text/html"}}},
		{"nginx's defaults", Gzip{On: &on}, Gzip{}, Gzip{}, &ir.Compression{Level: 1, MinLength: 20, ContentTypes: []string{"text/html"}}},
		{"off by default", Gzip{Level: 9}, Gzip{}, Gzip{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.location.Under(tc.server).Under(tc.http).Compression(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

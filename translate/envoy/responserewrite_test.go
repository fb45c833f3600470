package envoy

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Cookie flags reach the script as data: the rules in order, each its
// name match and nginx's spelling of its flags, beside the path rewrite
// of the same policy.
func TestResponseRewriteCookieFlags(t *testing.T) {
	cfg, err := responseRewrite(&ir.ResponseRewrite{
		CookiePath: &ir.Replace{From: "/a", To: "/"},
		CookieFlags: []ir.CookieFlagsRule{
			{Cookie: ir.CookieName{Match: ir.CookieNameExact, Text: "sid"}, Flags: []ir.CookieFlag{ir.CookieNoSecure}},
			{Cookie: ir.CookieName{Match: ir.CookieNameContains}, Flags: []ir.CookieFlag{ir.CookieSecure, ir.CookieHTTPOnly, ir.CookieSameSiteLax}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := protojson.Marshal(cfg.FilterContext)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cookieFlags":[{"flags":["nosecure"],"match":"Exact","text":"sid"},{"flags":["secure","httponly","samesite=lax"],"match":"Contains","text":""}],"cookiePathFrom":"/a","cookiePathTo":"/"}`
	if norm(t, got) != norm(t, []byte(want)) {
		t.Errorf("filter context\n got %s\nwant %s", got, want)
	}
}

// norm is JSON with protojson's random spacing taken out.
func norm(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

package nginxconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics, answers quickly, refuses only
// with an *Error on a line of the input, and that what it accepts prints
// to text that parses to the same tree and prints the same again.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`more_set_headers "X-Frame-Options: DENY";`,
		`add_header X "a b" always;`,
		`if ($http_user_agent ~* "(bot|crawler)") { return 403; }`,
		"rewrite ^/(.*)$ /new/$1 permanent; # moved\nset $x \"y\";",
		"location ~ \"^/api/v[0-9]{1,2}/\" {\n  proxy_pass http://x;\n}",
		"location ~ ^/api/v[0-9]{1,2}/ {\n  proxy_pass http://x;\n}",
		`proxy_set_header Authorization "Basic ${token}"; set $a ${b}c\;d;`,
		"more_set_headers 'CSP: default-src \\'self\\'';\r\nreturn 200 \"a\\tb\\n\";",
		"access_by_lua_block {\n  local t = { \"}\" } -- }\n  ngx.say([==[ } ]==])\n}",
		"server_name a;\n}\nlocation /evil {",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		ds, err := Parse(src)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Parse took %v on %d bytes", d, len(src))
		}
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): %T %v, want an *Error", src, err, err)
			}
			if lines := strings.Count(src, "\n") + 1; pe.Line < 1 || pe.Line > lines {
				t.Fatalf("Parse(%q): line %d outside 1..%d", src, pe.Line, lines)
			}
			return
		}
		out := Print(ds)
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Print(Parse(%q))): %v; printed:\n%s", src, err, out)
		}
		if a, b := stripLines(ds), stripLines(again); !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip of %q changed the tree\n got %#v\nwant %#v\nprinted:\n%s", src, b, a, out)
		}
		if out2 := Print(again); out2 != out {
			t.Fatalf("Print is not stable for %q:\n%s\nthen\n%s", src, out, out2)
		}
	})
}

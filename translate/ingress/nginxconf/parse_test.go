package nginxconf

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// d builds a simple directive; args written `"x"` (with the quotes) are
// quoted ones.
func d(line int, name string, args ...string) Directive {
	dir := Directive{Name: name, Line: line}
	for _, a := range args {
		q := len(a) >= 2 && a[0] == '"' && a[len(a)-1] == '"'
		if q {
			a = a[1 : len(a)-1]
		}
		dir.Args = append(dir.Args, a)
		dir.Quoted = append(dir.Quoted, q)
	}
	return dir
}

func blk(dir Directive, children ...Directive) Directive {
	dir.Block = append([]Directive{}, children...)
	return dir
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []Directive
	}{
		{"empty", "", []Directive{}},
		{"only a comment", "# nothing\n  # else", []Directive{}},
		{"simple", "proxy_http_version 1.1;", []Directive{d(1, "proxy_http_version", "1.1")}},
		{"no args", "internal;", []Directive{{Name: "internal", Line: 1}}},
		{"more_set_headers", `more_set_headers "X: y";`, []Directive{d(1, "more_set_headers", `"X: y"`)}},
		{"add_header always", `add_header X "a b" always;`, []Directive{d(1, "add_header", "X", `"a b"`, "always")}},
		{"if with quoted regex",
			`if ($http_user_agent ~* "(bot|crawler)") { return 403; }`,
			[]Directive{blk(d(1, "if", "($http_user_agent", "~*", `"(bot|crawler)"`, ")"), d(1, "return", "403"))}},
		{"if unquoted", "if ($host = example.com) {\n  return 301 https://www.example.com$request_uri;\n}",
			[]Directive{blk(d(1, "if", "($host", "=", "example.com)"), d(2, "return", "301", "https://www.example.com$request_uri"))}},
		{"rewrite", `rewrite ^/(.*)$ /new/$1 permanent;`, []Directive{d(1, "rewrite", "^/(.*)$", "/new/$1", "permanent")}},
		{"set quoted", `set $x "y";`, []Directive{d(1, "set", "$x", `"y"`)}},
		{"set empty", `proxy_set_header Connection "";`, []Directive{d(1, "proxy_set_header", "Connection", `""`)}},
		{"variable braces stay in the word", `set $a ${host}x;  return 200 "${a}";`,
			[]Directive{d(1, "set", "$a", "${host}x"), d(1, "return", "200", `"${a}"`)}},
		{"close brace inside a word", `return 200 a}b;`, []Directive{d(1, "return", "200", "a}b")}},
		{"quoted regex with braces", `location ~ "^/api/v[0-9]{1,2}/" { proxy_pass http://x; }`,
			[]Directive{blk(d(1, "location", "~", `"^/api/v[0-9]{1,2}/"`), d(1, "proxy_pass", "http://x"))}},
		{"single quotes", `more_set_headers 'Content-Security-Policy: default-src "self"';`,
			[]Directive{d(1, "more_set_headers", `"Content-Security-Policy: default-src "self""`)}},
		{"escapes in double quotes", `return 200 "a\"b\\c\'d\te\nf\$g";`,
			[]Directive{d(1, "return", "200", "\"a\"b\\c'd\te\nf\\$g\"")}},
		{"escapes unquoted", `rewrite ^/a\ b\;c /x\"y\\z;`,
			[]Directive{d(1, "rewrite", `^/a\ b\;c`, `/x"y\z`)}},
		{"escaped quote at word start", `add_header \"X\" y;`,
			[]Directive{{Name: "add_header", Args: []string{`"X"`, "y"}, Quoted: []bool{false, false}, Line: 1}}},
		{"quote in the middle of a word is literal", `add_header X a"b;`, []Directive{d(1, "add_header", "X", `a"b`)}},
		{"hash in a word is not a comment", "return 200 a#b; # c\nreturn 201;",
			[]Directive{d(1, "return", "200", "a#b"), d(2, "return", "201")}},
		{"hash in quotes is not a comment", `add_header X "#fff" ; # yes`,
			[]Directive{d(1, "add_header", "X", `"#fff"`)}},
		{"comment between args", "return # the code\n 403;", []Directive{d(1, "return", "403")}},
		{"args span lines", "add_header\n  X\n  \"y\nz\";\ninternal;",
			[]Directive{d(1, "add_header", "X", "\"y\nz\""), {Name: "internal", Line: 5}}},
		{"crlf", "a 1;\r\nb 2;\r\n", []Directive{d(1, "a", "1"), d(2, "b", "2")}},
		{"quote then semicolon, brace or paren", `if ($a = "b"){ set $c "d";}`,
			[]Directive{blk(d(1, "if", "($a", "=", `"b"`, ")"), d(1, "set", "$c", `"d"`))}},
		{"quote then paren glued to a word", `if ($a = "b")x { }`,
			[]Directive{blk(d(1, "if", "($a", "=", `"b"`, ")x"))}},
		{"empty block", "location /x {}", []Directive{blk(d(1, "location", "/x"))}},
		{"nested location and if",
			"location /api {\n  if ($request_method = POST) {\n    return 405;\n  }\n  location ~* \\.php$ { deny all; }\n}\nreturn 404;",
			[]Directive{
				blk(d(1, "location", "/api"),
					blk(d(2, "if", "($request_method", "=", "POST)"), d(3, "return", "405")),
					blk(d(5, "location", "~*", `\.php$`), d(5, "deny", "all"))),
				d(7, "return", "404"),
			}},
		{"lua block", "access_by_lua_block {\n  if x then ngx.exit(403) end\n}\nreturn 200;",
			[]Directive{{Name: "access_by_lua_block", Line: 1, Lua: "\n  if x then ngx.exit(403) end\n"}, d(4, "return", "200")}},
		{"lua braces in strings and comments",
			"content_by_lua_block { local t = { a = \"}\", b = '\\'}' } -- }\n ngx.say([==[ }]] ]==]) --[[ } ]] }",
			[]Directive{{Name: "content_by_lua_block", Line: 1,
				Lua: " local t = { a = \"}\", b = '\\'}' } -- }\n ngx.say([==[ }]] ]==]) --[[ } ]] "}}},
		{"set_by_lua_block", `set_by_lua_block $x { return "1" }`,
			[]Directive{{Name: "set_by_lua_block", Args: []string{"$x"}, Quoted: []bool{false}, Line: 1, Lua: ` return "1" `}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.src, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q)\n got %#v\nwant %#v", tc.src, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		msg       string
	}{
		{"no semicolon", "return 403", 1, `expecting ";"`},
		{"no semicolon last line", "add_header X y;\nadd_header Z w", 2, `expecting ";"`},
		{"unclosed block", "location / {\n  return 200;\n", 3, `opened on line 1`},
		{"stray close", "return 200;\n}", 2, `unexpected "}"`},
		{"close after args", "location / {\n  return 200 }\n", 2, `no ";"`},
		{"lone semicolon", "return 200;;", 1, `unexpected ';'`},
		{"lone brace", "{ return 200; }", 1, `unexpected '{'`},
		{"unclosed double quote", "add_header X \"y;\nreturn 200;", 2, `quoted string opened on line 1`},
		{"unclosed single quote", "add_header X 'y;", 1, `quoted string opened on line 1`},
		{"glued after quote", `add_header X "y"z;`, 1, `unexpected 'z'`},
		{"hash glued after quote", `add_header X "y"#z`, 1, `unexpected '#'`},
		{"comment swallows the semicolon", "return 403 # done;\n", 2, `expecting ";"`},
		// nginx lexes an unquoted "{" as a block: the regex splits into
		// `location ~ ^/api/v[0-9]` { `1,2}/` { ... } and the outer block
		// is never closed. nginx refuses it too; the regex must be quoted.
		{"unquoted regex braces", "location ~ ^/api/v[0-9]{1,2}/ {\n  proxy_pass http://x;\n}", 3, `opened on line 1`},
		{"lua block without a block", "content_by_lua_block foo;", 1, `no opening "{"`},
		{"lua block unclosed", "access_by_lua_block {\n ngx.exit(403)\n", 3, `Lua block opened on line 1`},
		{"lua string unclosed", "access_by_lua_block {\n ngx.say(\"}) }\n", 2, `Lua string`},
		{"lua long bracket unclosed", "access_by_lua_block { x = [[ } }", 1, `long bracket "]]"`},
		{"too deep", strings.Repeat("a {", MaxDepth+1) + strings.Repeat("}", MaxDepth+1), 1, "nested deeper"},
		{"too big", strings.Repeat("a;", MaxSize), 1, "longer than"},
		{"token too long", "return 200 " + strings.Repeat("x", MaxToken+1) + ";", 1, "too long"},
		{"comment too long", "#" + strings.Repeat("x", MaxToken+1) + "\nreturn 200;", 1, "too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%.60q) = %v, %v; want an *Error", tc.src, got, err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("Parse(%.60q): %v; want line %d and %q", tc.src, err, tc.line, tc.msg)
			}
		})
	}
}

func TestTokenAtTheLimit(t *testing.T) {
	for _, src := range []string{
		"return 200 " + strings.Repeat("x", MaxToken) + ";",
		`return 200 "` + strings.Repeat("x", MaxToken-1) + `";`,
	} {
		if _, err := Parse(src); err != nil {
			t.Errorf("token of %d bytes: %v", MaxToken, err)
		}
	}
	if _, err := Parse(strings.Repeat("a {", MaxDepth) + strings.Repeat("}", MaxDepth)); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
}

func TestPrint(t *testing.T) {
	src := "location ~ \"^/v[0-9]{1,2}/\" {\n" +
		"if ($http_user_agent ~* \"(bot|crawler)\") { return 403; }\n" +
		"more_set_headers 'X: \"y\"' ; set $a ${b}c; rewrite ^/a\\;b \\\"/x; add_header X \"\"; }\n" +
		"rewrite_by_lua_block { ngx.var.a = \"}\" }\n"
	want := "location ~ \"^/v[0-9]{1,2}/\" {\n" +
		"    if ($http_user_agent ~* \"(bot|crawler)\" ) {\n" +
		"        return 403;\n" +
		"    }\n" +
		"    more_set_headers \"X: \\\"y\\\"\";\n" +
		"    set $a ${b}c;\n" +
		"    rewrite ^/a\\;b \\\"/x;\n" +
		"    add_header X \"\";\n" +
		"}\n" +
		"rewrite_by_lua_block { ngx.var.a = \"}\" }\n"
	ds, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := Print(ds); got != want {
		t.Errorf("Print:\n%s\nwant:\n%s", got, want)
	}
	roundTrip(t, src)
}

// roundTrip checks that Print's output parses to the same tree, lines
// aside.
func roundTrip(t *testing.T, src string) {
	t.Helper()
	ds, err := Parse(src)
	if err != nil {
		return
	}
	out := Print(ds)
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("Parse(Print(Parse(%q))) = %v; printed:\n%s", src, err, out)
	}
	if a, b := stripLines(ds), stripLines(again); !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip of %q changed the tree\n got %#v\nwant %#v\nprinted:\n%s", src, b, a, out)
	}
}

func stripLines(ds []Directive) []Directive {
	if ds == nil {
		return nil
	}
	out := make([]Directive, len(ds))
	for i, x := range ds {
		x.Line = 0
		x.Block = stripLines(x.Block)
		out[i] = x
	}
	return out
}

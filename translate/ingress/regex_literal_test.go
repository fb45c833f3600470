package ingress

import (
	"strings"
	"testing"
)

// TestLiteralRegex checks the literal shortcut against the full check
// (checkRegex: the bound, then RE2's compiler): for every path it takes,
// the same expression, or a refusal where the full check refuses; and it
// takes no path with an operator.
func TestLiteralRegex(t *testing.T) {
	long := "/" + strings.Repeat("a", 1100)
	for _, tc := range []struct {
		path    string
		literal bool
	}{
		{"/", true}, {"/p4", true}, {"/foo/bar-baz_~:@!,;=&'%", true}, {"/é", true}, {long, true},
		{"/a.b", false}, {"/a|/b", false}, {"/(x)", false}, {"/a+", false}, {"/a$", false}, {"/\xff", false},
	} {
		for prefix, build := range map[string]func(string) (string, error){"(?i)(?:": locationRegex, "(?i)^(?:": rewriteRegex} {
			expr := prefix + tc.path + ").*"
			_, literal, _ := literalRegex(tc.path, expr)
			if literal != tc.literal {
				t.Errorf("%.20q taken as a literal: %v, want %v", tc.path, literal, tc.literal)
				continue
			}
			if !literal {
				continue
			}
			got, err := build(tc.path)
			want, wantErr := checkRegex(expr)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Errorf("%.20q: %q, %v; the full check says %q, %v", tc.path, got, err, want, wantErr)
			}
		}
	}
}

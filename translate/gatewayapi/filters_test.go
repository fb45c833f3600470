package gatewayapi

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestPrefixRewrite applies the substitution as Envoy does (RE2, the whole
// path without its query) to the paths of Gateway API's table for
// ReplacePrefixMatch.
func TestPrefixRewrite(t *testing.T) {
	for _, c := range []struct {
		prefix, replacement, path, want string
	}{
		{"/foo", "/xyz", "/foo/bar", "/xyz/bar"},
		{"/foo", "/xyz/", "/foo/bar", "/xyz/bar"},
		{"/foo/", "/xyz", "/foo/bar", "/xyz/bar"},
		{"/foo/", "/xyz/", "/foo/bar", "/xyz/bar"},
		{"/foo", "/xyz", "/foo", "/xyz"},
		{"/foo", "/xyz", "/foo/", "/xyz/"},
		{"/foo", "", "/foo/bar", "/bar"},
		{"/foo", "", "/foo/", "/"},
		{"/foo", "", "/foo", "/"},
		{"/foo", "/", "/foo/bar", "/bar"},
		{"/foo", "/", "/foo/", "/"},
		{"/foo", "/", "/foo", "/"},
		{"/", "/xyz", "/foo", "/xyz/foo"},
		{"/", "/", "/foo/bar", "/foo/bar"},
		{"/a.b", "/c", "/a.b/d", "/c/d"},
	} {
		m, err := match(pathPrefix(c.prefix))
		if err != nil {
			t.Fatal(err)
		}
		replacement := c.replacement
		rw, err := prefixRewrite(&replacement, m)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := substitute(t, rw, c.path); got != c.want {
			t.Errorf("prefix %s replaced by %q: %s became %s, want %s", c.prefix, c.replacement, c.path, got, c.want)
		}
	}
	replacement := "/x"
	if _, err := prefixRewrite(&replacement, ir.Match{PathType: ir.PathExact, Path: "/foo"}); err == nil {
		t.Error("ReplacePrefixMatch on an Exact match was accepted")
	}
}

// substitute runs an RE2 substitution over a whole path as Envoy's
// regex_rewrite does, \1 naming the first group.
func substitute(t *testing.T, rw *ir.RegexRewrite, path string) string {
	t.Helper()
	re := regexp.MustCompile(rw.Pattern)
	if !re.MatchString(path) {
		t.Fatalf("%q does not match %s", path, rw.Pattern)
	}
	return re.ReplaceAllString(path, strings.ReplaceAll(rw.Substitution, `\1`, "${1}"))
}

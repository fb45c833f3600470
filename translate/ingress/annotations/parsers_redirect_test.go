package annotations

import "testing"

// The redirect values are read as ingress-nginx's parser reads them: its
// characters for URLs and app-root (so no userinfo, CR, LF, % or space), an
// http(s) URL with a host, an absolute path where permanent-redirect takes
// one, and codes with a Location.
func TestRedirectValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) (any, error)
		value string
		ok    bool
	}{
		{"permanent: a URL", boxed(parseRedirectURL(true)), "http://redirect.example.com", true},
		{"permanent: a URL with a port, path and query", boxed(parseRedirectURL(true)), "https://a.example.com:8443/x/y?a=1&b=2,3", true},
		{"permanent: an absolute path", boxed(parseRedirectURL(true)), "/new-location", true},
		{"permanent: a scheme-relative URL", boxed(parseRedirectURL(true)), "//evil.example/", false},
		{"permanent: a relative path", boxed(parseRedirectURL(true)), "new-location", false},
		{"permanent: another scheme", boxed(parseRedirectURL(true)), "ftp://files.example.com", false},
		{"permanent: userinfo", boxed(parseRedirectURL(true)), "http://user@evil.example/", false},
		{"permanent: CR LF", boxed(parseRedirectURL(true)), "http://a.example/\r\nX: 1", false},
		{"permanent: a percent escape", boxed(parseRedirectURL(true)), "http://a.example/%0d", false},
		{"permanent: no host", boxed(parseRedirectURL(true)), "http:///x", false},
		{"temporal: a URL", boxed(parseRedirectURL(false)), "HTTPS://temporal.example.com/", true},
		{"temporal: no path", boxed(parseRedirectURL(false)), "/new-location", false},
		{"code: 308", boxed(parseRedirectCode(301, 302, 303, 307, 308)), "308", true},
		{"code: 306", boxed(parseRedirectCode(301, 302, 303, 307, 308)), "306", false},
		{"code: 308 for temporal", boxed(parseRedirectCode(301, 302, 303, 307)), "308", false},
		{"code: not a number", boxed(parseRedirectCode(301)), "301s", false},
		{"app-root: a path", boxed(parseAppRoot), "/app/v1", true},
		{"app-root: an absolute URL", boxed(parseAppRoot), "http://example.com/app", false},
		{"app-root: no leading slash", boxed(parseAppRoot), "app", false},
		{"app-root: an nginx variable", boxed(parseAppRoot), "/app$1", false},
		{"app-root: a query", boxed(parseAppRoot), "/app?x=1", false},
	} {
		_, err := tc.parse(tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %q: error %v, want accepted %t", tc.name, tc.value, err, tc.ok)
		}
	}
}

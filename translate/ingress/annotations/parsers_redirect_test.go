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
		{"permanent: a URL", parseRedirectURL(true), "http://redirect.example.com", true},
		{"permanent: a URL with a port, path and query", parseRedirectURL(true), "https://a.example.com:8443/x/y?a=1&b=2,3", true},
		{"permanent: an absolute path", parseRedirectURL(true), "/new-location", true},
		{"permanent: a scheme-relative URL", parseRedirectURL(true), "//evil.example/", false},
		{"permanent: a relative path", parseRedirectURL(true), "new-location", false},
		{"permanent: another scheme", parseRedirectURL(true), "ftp://files.example.com", false},
		{"permanent: userinfo", parseRedirectURL(true), "http://user@evil.example/", false},
		{"permanent: CR LF", parseRedirectURL(true), "http://a.example/\r\nX: 1", false},
		{"permanent: a percent escape", parseRedirectURL(true), "http://a.example/%0d", false},
		{"permanent: no host", parseRedirectURL(true), "http:///x", false},
		{"temporal: a URL", parseRedirectURL(false), "HTTPS://temporal.example.com/", true},
		{"temporal: no path", parseRedirectURL(false), "/new-location", false},
		{"code: 308", parseRedirectCode(301, 302, 303, 307, 308), "308", true},
		{"code: 306", parseRedirectCode(301, 302, 303, 307, 308), "306", false},
		{"code: 308 for temporal", parseRedirectCode(301, 302, 303, 307), "308", false},
		{"code: not a number", parseRedirectCode(301), "301s", false},
		{"app-root: a path", parseAppRoot, "/app/v1", true},
		{"app-root: an absolute URL", parseAppRoot, "http://example.com/app", false},
		{"app-root: no leading slash", parseAppRoot, "app", false},
		{"app-root: an nginx variable", parseAppRoot, "/app$1", false},
		{"app-root: a query", parseAppRoot, "/app?x=1", false},
	} {
		_, err := tc.parse(tc.value)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %q: error %v, want accepted %t", tc.name, tc.value, err, tc.ok)
		}
	}
}

package annotations

import "testing"

func TestExternalAuthValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) (any, error)
		good  []string
		bad   []string
	}{
		{"auth-url", boxed(parseAuthURL),
			[]string{"http://auth.ns.svc.cluster.local/verify", "https://$host/oauth2/auth", "http://198.18.0.5:8080/basic-auth/user/password",
				"http://auth/check?u=$request_uri&x=$http_x_token", "https://[2001:db8::1]:8443/"},
			[]string{"ftp://auth/", "auth/verify", "http://user:pass@auth/", "http://auth/\r\nX: y", "http://auth/\x00", "http://127.0.0.1/",
				"http://localhost:9901/", "http://169.254.169.254/latest", "http://[::1]/", "http://0.0.0.0/", "https://invalid..auth.url",
				"http://$http_x_target/", "http://auth/$namespace", "http://auth:99999/", "http://auth/ a", "http://a$/"}},
		{"auth-signin", boxed(parseSigninURL),
			[]string{"http://$host/auth/start", "https://login.example/start?rd=$escaped_request_uri", "/oauth2/start"},
			[]string{"javascript:alert(1)", "//evil/", "http://x/\nSet-Cookie: a", "https://$service_name/"}},
		{"auth-signin-redirect-param", boxed(parseQueryParam), []string{"rd", "orig", "return_to"}, []string{"a b", "a&b", "", "a=b"}},
		{"auth-response-headers", boxed(parseHeaderNames), []string{"X-User", "X-User, X-Email,", "Foo"},
			[]string{"", "X User", "X-User\r\n", "Host", "x-user, content-length", "a:b"}},
		{"auth-cache-key", boxed(parseNginxText), []string{"fixed", "$remote_user$http_authorization", "$cookie_session $host"},
			[]string{"", "$namespace", "a\nb", "a$"}},
		{"auth-cache-duration", boxed(parseCacheDuration), []string{"200 202 401 5m", "5m", "200 1h 30m, 500 any 1s", "401 10s,"},
			[]string{"", "200", "5m 200", "200 5x", "2000 5m", "200 -5m", ","}},
	} {
		for _, s := range tc.good {
			if _, err := tc.parse(s); err != nil {
				t.Errorf("%s %q: %v, want it taken", tc.name, s, err)
			}
		}
		for _, s := range tc.bad {
			if v, err := tc.parse(s); err == nil {
				t.Errorf("%s %q taken (%v), want refused", tc.name, s, v)
			}
		}
	}
}

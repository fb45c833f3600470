package ingress

import "testing"

// TestRedactUserinfo checks that a problem's message never shows the
// password of a URL it quotes, whatever quoting surrounds the URL.
func TestRedactUserinfo(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`auth-url="https://user:secret@auth.example.com/check": holds userinfo`, `auth-url="https://[redacted]@auth.example.com/check": holds userinfo`},
		{`value "http://u:p@a.example\"x": bad`, `value "http://[redacted]@a.example\"x": bad`},
		{`http://a:b@x/ and https://c:d@y?q`, `http://[redacted]@x/ and https://[redacted]@y?q`},
		{`http://a.example/path@not-userinfo`, `http://a.example/path@not-userinfo`},
		{`no url, user@example.com`, `no url, user@example.com`},
		{`trailing ://`, `trailing ://`},
	} {
		if got := redactUserinfo(tc.in); got != tc.want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

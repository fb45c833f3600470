package echo

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

// auth answers a request under /auth/ as an external auth service
// (ingress-nginx's auth-url) would, and reports whether it did:
// /auth/basic/USER/PASSWORD allows (200) Basic credentials of that user and
// password and answers 401 with a challenge otherwise, like httpbun's
// /basic-auth/USER/PASSWORD that ingress-nginx's e2e tests use;
// /auth/status/CODE answers CODE. The query adds to the answer: user=NAME
// an X-User header, cookie=NAME=VALUE a Set-Cookie. Every answer reports
// what the subrequest carried as X-Auth-* headers (its method, Host, body
// length and the headers nginx's auth location sets), which a test copies
// to the backend with auth-response-headers and reads in the backend's
// reply.
func auth(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/auth/")
	if !ok {
		return false
	}
	body, _ := io.Copy(io.Discard, r.Body)
	h := w.Header()
	h.Set("X-Auth-Method", r.Method)
	h.Set("X-Auth-Host", r.Host)
	h.Set("X-Auth-Body", strconv.FormatInt(body, 10))
	for _, name := range []string{"X-Original-Url", "X-Original-Method", "X-Original-Uri", "X-Forwarded-For", "X-Real-Ip",
		"X-Sent-From", "X-Auth-Request-Redirect", "X-Scheme", "My-Custom-Header", "Authorization"} {
		if v := r.Header.Get(name); v != "" {
			h.Set("X-Auth-Saw-"+name, v)
		}
	}
	q := r.URL.Query()
	if user := q.Get("user"); user != "" {
		h.Set("X-User", user)
	}
	if c := q.Get("cookie"); c != "" {
		h.Add("Set-Cookie", c)
	}
	status := http.StatusNotFound
	switch parts := strings.Split(rest, "/"); {
	case len(parts) == 3 && parts[0] == "basic":
		if user, pass, ok := r.BasicAuth(); ok && user == parts[1] && pass == parts[2] {
			status = http.StatusOK
		} else {
			h.Set("WWW-Authenticate", `Basic realm="Fake Realm"`)
			status = http.StatusUnauthorized
		}
	case len(parts) == 2 && parts[0] == "status":
		if code, err := strconv.Atoi(parts[1]); err == nil && code >= 200 && code <= 599 {
			status = code
		}
	}
	w.WriteHeader(status)
	return true
}

package authz

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/codes"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// authServer is a real HTTP auth service: it answers with the status and
// headers the test gives and records the subrequests it got.
type authServer struct {
	*httptest.Server
	mu      sync.Mutex
	got     []*http.Request
	bodies  []string
	status  int
	headers http.Header
}

func newAuthServer(t *testing.T, status int, headers http.Header) *authServer {
	s := &authServer{status: status, headers: headers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, r)
		s.bodies = append(s.bodies, string(body))
		status, headers := s.status, s.headers
		s.mu.Unlock()
		for k, v := range headers {
			w.Header()[k] = v
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *authServer) requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.got...)
}

// checkRequest is what Envoy sends for a client's GET of path on host.
func extCheckRequest(method, host, path string, headers map[string]string) *authv3.CheckRequest {
	h := map[string]string{":authority": host, ":path": path, ":method": method, "content-length": "5"}
	for k, v := range headers {
		h[k] = v
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source: &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: "198.18.0.7"}}}},
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "req-1", Method: method, Host: host, Path: path, Scheme: "http", Headers: h,
		}},
	}}
}

func testChecker(t *testing.T) *externalChecker {
	t.Helper()
	return newExternalChecker(externalOptions{allowAnyAddress: true})
}

func mustCheck(t *testing.T, c *externalChecker, req *authv3.CheckRequest, ext map[string]string) *authv3.CheckResponse {
	t.Helper()
	resp, err := c.check(context.Background(), req, ext)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return resp
}

func deniedStatus(t *testing.T, resp *authv3.CheckResponse) int {
	t.Helper()
	if resp.GetStatus().GetCode() == int32(codes.OK) {
		return 0
	}
	return int(resp.GetDeniedResponse().GetStatus().GetCode())
}

func headerOf(opts []*corev3.HeaderValueOption, name string) []string {
	var out []string
	for _, o := range opts {
		if strings.EqualFold(o.GetHeader().GetKey(), name) {
			out = append(out, o.GetHeader().GetValue())
		}
	}
	return out
}

func TestExternalSubrequestIsNginxs(t *testing.T) {
	s := newAuthServer(t, http.StatusOK, nil)
	c := testChecker(t)
	req := extCheckRequest("POST", "app.example:8080", "/a/b?x=1", map[string]string{
		"authorization": "Basic dXNlcjpwYXNz", "x-forwarded-proto": "https", "cookie": "s=1",
	})
	resp := mustCheck(t, c, req, map[string]string{authzapi.ExternalURL: s.URL + "/check?v=1"})
	if got := deniedStatus(t, resp); got != 0 {
		t.Fatalf("a 200 from the auth service: denied with %d", got)
	}
	got := s.requests()
	if len(got) != 1 {
		t.Fatalf("the auth service got %d requests, want 1", len(got))
	}
	r := got[0]
	want := map[string]string{
		"X-Original-Url":          "http://app.example:8080/a/b?x=1",
		"X-Original-Method":       "POST",
		"X-Sent-From":             "nginx-ingress-controller",
		"X-Real-Ip":               "198.18.0.7",
		"X-Forwarded-For":         "198.18.0.7",
		"X-Auth-Request-Redirect": "/a/b?x=1",
		"X-Request-Id":            "req-1",
		"Authorization":           "Basic dXNlcjpwYXNz",
		"Cookie":                  "s=1",
		"X-Forwarded-Proto":       "",
		"X-Original-Uri":          "", // only with auth-method
		"X-Scheme":                "",
	}
	for k, v := range want {
		if r.Header.Get(k) != v {
			t.Errorf("subrequest header %s = %q, want %q", k, r.Header.Get(k), v)
		}
	}
	if r.Method != http.MethodGet || r.URL.RequestURI() != "/check?v=1" {
		t.Errorf("subrequest %s %s, want GET /check?v=1 (auth-method's default, the fixed URL)", r.Method, r.URL.RequestURI())
	}
	if r.Host != "127.0.0.1" {
		t.Errorf("subrequest Host %q, want the auth-url's host without its port", r.Host)
	}
	if s.bodies[0] != "" || r.ContentLength > 0 {
		t.Errorf("subrequest carried a body (%q, length %d)", s.bodies[0], r.ContentLength)
	}
}

func TestExternalMethodAddsOriginalURI(t *testing.T) {
	s := newAuthServer(t, http.StatusNoContent, nil)
	c := testChecker(t)
	mustCheck(t, c, extCheckRequest("GET", "app", "/p?q", nil), map[string]string{
		authzapi.ExternalURL: s.URL, authzapi.ExternalMethod: "POST", authzapi.ExternalRequestRedirect: "https://$host/back",
	})
	r := s.requests()[0]
	if r.Method != "POST" || r.Header.Get("X-Original-Uri") != "/p?q" || r.Header.Get("X-Scheme") != "http" {
		t.Errorf("with auth-method POST: %s, X-Original-URI %q, X-Scheme %q", r.Method, r.Header.Get("X-Original-Uri"), r.Header.Get("X-Scheme"))
	}
	if got := r.Header.Get("X-Auth-Request-Redirect"); got != "https://app/back" {
		t.Errorf("X-Auth-Request-Redirect = %q, want auth-request-redirect expanded", got)
	}
}

func TestExternalStatusMapping(t *testing.T) {
	for _, tc := range []struct{ auth, want int }{
		{200, 0}, {201, 0}, {204, 0}, {401, 401}, {403, 403},
		{302, 500}, {404, 500}, {500, 500}, {503, 500}, {400, 500},
	} {
		s := newAuthServer(t, tc.auth, http.Header{"Www-Authenticate": {`Basic realm="x"`}})
		resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil), map[string]string{authzapi.ExternalURL: s.URL})
		if got := deniedStatus(t, resp); got != tc.want {
			t.Errorf("auth service %d: client gets %d, want %d (0: allowed)", tc.auth, got, tc.want)
		}
		www := headerOf(resp.GetDeniedResponse().GetHeaders(), "WWW-Authenticate")
		if (tc.want == 401) != (len(www) == 1) {
			t.Errorf("auth service %d: WWW-Authenticate %q passed (only a 401's is)", tc.auth, www)
		}
	}
}

func TestExternalUnreachableIs500(t *testing.T) {
	s := newAuthServer(t, 200, nil)
	url := s.URL
	s.Close()
	resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil), map[string]string{authzapi.ExternalURL: url})
	if got := deniedStatus(t, resp); got != 500 {
		t.Errorf("auth service down: %d, want 500", got)
	}
}

func TestExternalSignin(t *testing.T) {
	s := newAuthServer(t, 401, http.Header{"Set-Cookie": {"a=1"}})
	for _, tc := range []struct{ signin, param, want string }{
		{"http://$host/auth/start", "", "http://app/auth/start?rd=http://app%2F%3Fa%3Db%26c%3Dd"},
		{"http://$host/auth/start", "orig", "http://app/auth/start?orig=http://app%2F%3Fa%3Db%26c%3Dd"},
		{"https://login/start?x=1", "", "https://login/start?x=1&rd=http://app%2F%3Fa%3Db%26c%3Dd"},
		{"https://login/start?rd=$escaped_request_uri", "", "https://login/start?rd=%2F%3Fa%3Db%26c%3Dd"},
	} {
		resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "app", "/?a=b&c=d", nil), map[string]string{
			authzapi.ExternalURL: s.URL, authzapi.ExternalSignin: tc.signin, authzapi.ExternalSigninParam: tc.param,
		})
		if got := deniedStatus(t, resp); got != 302 {
			t.Fatalf("%s: %d, want 302", tc.signin, got)
		}
		headers := resp.GetDeniedResponse().GetHeaders()
		if got := headerOf(headers, "Location"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s (%q): Location %q, want %q", tc.signin, tc.param, got, tc.want)
		}
		if got := headerOf(headers, "Set-Cookie"); len(got) != 1 || got[0] != "a=1" {
			t.Errorf("sign-in redirect Set-Cookie %q, want the auth service's", got)
		}
	}
}

func TestExternalResponseHeaders(t *testing.T) {
	s := newAuthServer(t, 200, http.Header{"X-User": {"alice"}, "Set-Cookie": {"a=1", "b=2"}})
	resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", map[string]string{"x-user": "mallory", "foo": "bar"}),
		map[string]string{authzapi.ExternalURL: s.URL, authzapi.ExternalResponseHeaders: "X-User, Foo"})
	ok := resp.GetOkResponse()
	if got := headerOf(ok.GetHeaders(), "X-User"); len(got) != 1 || got[0] != "alice" {
		t.Errorf("X-User set to %q, want the auth service's alice", got)
	}
	if len(ok.GetHeadersToRemove()) != 1 || ok.GetHeadersToRemove()[0] != "foo" {
		t.Errorf("headers to remove %q, want foo (the auth service gave none, so the client's must go)", ok.GetHeadersToRemove())
	}
	// Without auth-always-set-cookie the cookies go under the header the
	// renderer's filter turns into Set-Cookie on success answers only.
	if got := headerOf(ok.GetResponseHeadersToAdd(), authzapi.ExternalCookieHeader); strings.Join(got, " ") != "a=1 b=2" {
		t.Errorf("cookies handed to Envoy %q, want both under %s", got, authzapi.ExternalCookieHeader)
	}
	if got := headerOf(ok.GetResponseHeadersToAdd(), "Set-Cookie"); len(got) != 0 {
		t.Errorf("Set-Cookie %q added whatever the backend answers", got)
	}
	resp = mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil),
		map[string]string{authzapi.ExternalURL: s.URL, authzapi.ExternalAlwaysSetCookie: "true"})
	if got := headerOf(resp.GetOkResponse().GetResponseHeadersToAdd(), "Set-Cookie"); strings.Join(got, " ") != "a=1 b=2" {
		t.Errorf("with auth-always-set-cookie, Set-Cookie %q, want both on every answer", got)
	}
}

// nginx's auth_request_set $token $upstream_http_x_auth_request_access_token;
// proxy_set_header Authorization "Bearer $token": the header made from the
// answer's, sent when not empty; an empty one removes the client's
// (ngx_http_proxy_module: an empty value is not sent, and a header in the
// list is never copied from the client).
func TestExternalUpstreamHeaders(t *testing.T) {
	s := newAuthServer(t, 200, http.Header{"X-Auth-Request-Access-Token": {"t0k"}})
	headers := `[{"name":"Authorization","parts":[["Bearer ",""],["","X-Auth-Request-Access-Token"]]},` +
		`{"name":"X-Email","parts":[["","X-Auth-Request-Email"]]}]`
	resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", map[string]string{"authorization": "forged", "x-email": "mallory"}),
		map[string]string{authzapi.ExternalURL: s.URL, authzapi.ExternalUpstreamHeaders: headers})
	ok := resp.GetOkResponse()
	if got := headerOf(ok.GetHeaders(), "Authorization"); len(got) != 1 || got[0] != "Bearer t0k" {
		t.Errorf("Authorization set to %q, want Bearer and the answer's token", got)
	}
	if !slices.Contains(ok.GetHeadersToRemove(), "x-email") {
		t.Errorf("headers to remove %q, want x-email (empty: the client's must go)", ok.GetHeadersToRemove())
	}
	if _, err := parseExternal(map[string]string{authzapi.ExternalURL: s.URL, authzapi.ExternalUpstreamHeaders: "{"}); err == nil {
		t.Error("a broken upstream-headers value was taken")
	}
}

func TestExternalAlwaysSetCookie(t *testing.T) {
	s := newAuthServer(t, 403, http.Header{"Set-Cookie": {"a=1"}})
	ext := map[string]string{authzapi.ExternalURL: s.URL}
	resp := mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil), ext)
	if got := headerOf(resp.GetDeniedResponse().GetHeaders(), "Set-Cookie"); len(got) != 0 {
		t.Errorf("403 without auth-always-set-cookie carried %q", got)
	}
	ext[authzapi.ExternalAlwaysSetCookie] = "true"
	resp = mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil), ext)
	if got := headerOf(resp.GetDeniedResponse().GetHeaders(), "Set-Cookie"); len(got) != 1 {
		t.Errorf("403 with auth-always-set-cookie carried %q, want the cookie", got)
	}
}

func TestExternalProxySetHeaders(t *testing.T) {
	s := newAuthServer(t, 200, nil)
	mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", map[string]string{"x-drop": "1"}), map[string]string{
		authzapi.ExternalURL:             s.URL,
		authzapi.ExternalProxySetHeaders: "My-Custom-Header: 42\nX-Drop: \nX-Host: $host",
	})
	r := s.requests()[0]
	if r.Header.Get("My-Custom-Header") != "42" || r.Header.Get("X-Host") != "h" || r.Header.Get("X-Drop") != "" {
		t.Errorf("proxy-set-headers: %v", r.Header)
	}
}

func TestExternalCache(t *testing.T) {
	s := newAuthServer(t, 200, http.Header{"X-User": {"alice"}})
	now := time.Unix(1000, 0)
	c := newExternalChecker(externalOptions{allowAnyAddress: true, now: func() time.Time { return now }, cacheEntries: 2})
	ext := func(scope string) map[string]string {
		return map[string]string{
			authzapi.ExternalURL: s.URL, authzapi.ExternalCacheKey: "$remote_user", authzapi.ExternalCacheScope: scope,
			authzapi.ExternalCacheDuration: "200 201 401 30m", authzapi.ExternalResponseHeaders: "X-User",
		}
	}
	alice := map[string]string{"authorization": "Basic YWxpY2U6cA=="}
	mustCheck(t, c, extCheckRequest("GET", "h", "/", alice), ext("h/foo"))
	s.mu.Lock()
	s.status = 500
	s.mu.Unlock()
	resp := mustCheck(t, c, extCheckRequest("GET", "h", "/", alice), ext("h/foo"))
	if deniedStatus(t, resp) != 0 || headerOf(resp.GetOkResponse().GetHeaders(), "X-User")[0] != "alice" {
		t.Errorf("cached 200 not served: %v", resp)
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("auth service asked %d times, want once (cached)", n)
	}
	if got := deniedStatus(t, mustCheck(t, c, extCheckRequest("GET", "h", "/", alice), ext("h/bar"))); got != 500 {
		t.Errorf("another location's cache served: %d, want 500", got)
	}
	if got := deniedStatus(t, mustCheck(t, c, extCheckRequest("GET", "h", "/", map[string]string{"authorization": "Basic Ym9iOnA="}), ext("h/foo"))); got != 500 {
		t.Errorf("another user's key served from cache: %d, want 500", got)
	}
	now = now.Add(31 * time.Minute)
	if got := deniedStatus(t, mustCheck(t, c, extCheckRequest("GET", "h", "/", alice), ext("h/foo"))); got != 500 {
		t.Errorf("expired entry served: %d, want 500", got)
	}
	// 500 is not in the rule: never cached; the cache stays within bounds.
	for i := range 5 {
		mustCheck(t, c, extCheckRequest("GET", "h", "/", alice), ext(strings.Repeat("x", i)))
	}
	if n := c.cache.len(); n > 2 {
		t.Errorf("cache holds %d entries, bound 2", n)
	}
}

func TestCacheDurations(t *testing.T) {
	rules, err := parseCacheDurations("200 202 401 5m, 500 1h 30m, any 10s")
	if err != nil {
		t.Fatal(err)
	}
	for status, want := range map[int]time.Duration{200: 5 * time.Minute, 401: 5 * time.Minute, 500: 90 * time.Minute, 404: 10 * time.Second} {
		if got := ttlFor(rules, status); got != want {
			t.Errorf("ttl of %d = %v, want %v", status, got, want)
		}
	}
	if rules, _ := parseCacheDurations("5m"); ttlFor(rules, 302) != 5*time.Minute || ttlFor(rules, 401) != 0 {
		t.Errorf("a time alone is nginx's 200 301 302")
	}
	for _, bad := range []string{"200", "5m 200", "200 5x", "200 -5m"} {
		if _, err := parseCacheDurations(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestAddressGuard(t *testing.T) {
	g := &addressGuard{own: map[netip.Addr]bool{netip.MustParseAddr("10.1.2.3"): true}}
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "169.254.169.254": true, "fe80::1": true, "0.0.0.0": true, "::": true,
		"::ffff:127.0.0.1": true, "224.0.0.1": true, "10.1.2.3": true, "10.1.2.4": false, "198.18.0.5": false,
	} {
		if got := g.refused(netip.MustParseAddr(addr)); got != want {
			t.Errorf("refused(%s) = %v, want %v", addr, got, want)
		}
	}
	// The production guard refuses a real service on loopback: 500, and
	// the service is never asked.
	s := newAuthServer(t, 200, nil)
	resp := mustCheck(t, newExternalChecker(externalOptions{}), extCheckRequest("GET", "h", "/", nil), map[string]string{authzapi.ExternalURL: s.URL})
	if got := deniedStatus(t, resp); got != 500 || len(s.requests()) != 0 {
		t.Errorf("auth-url on loopback: %d after %d requests, want 500 after none", got, len(s.requests()))
	}
	// A name that resolves to loopback is refused after DNS, not by its
	// spelling: the address dialled is checked.
	byName := strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
	resp = mustCheck(t, newExternalChecker(externalOptions{}), extCheckRequest("GET", "h", "/", nil), map[string]string{authzapi.ExternalURL: byName})
	if got := deniedStatus(t, resp); got != 500 || len(s.requests()) != 0 {
		t.Errorf("auth-url %s: %d after %d requests, want 500 after none", byName, got, len(s.requests()))
	}
	// And the same server is reached where the guard allows it: the
	// refusal above is the guard's, not a broken server.
	resp = mustCheck(t, testChecker(t), extCheckRequest("GET", "h", "/", nil), map[string]string{authzapi.ExternalURL: byName})
	if got := deniedStatus(t, resp); got != 0 || len(s.requests()) != 1 {
		t.Errorf("auth-url %s without the guard: %d after %d requests, want allowed after one", byName, got, len(s.requests()))
	}
}

func TestVariables(t *testing.T) {
	v := &requestVars{method: "GET", scheme: "https", authority: "App.Example:8443", requestURI: "/a%20b?x=1&Y=2",
		remoteAddr: "198.18.0.9", headers: map[string]string{"x-token": "t", "cookie": "a=1; sid=xyz", "authorization": "Basic dXNlcjpwYXNz"}}
	for in, want := range map[string]string{
		"$host":                     "app.example",
		"${http_host}":              "App.Example:8443",
		"$scheme://$host$uri":       "https://app.example/a b",
		"$request_uri":              "/a%20b?x=1&Y=2",
		"$escaped_request_uri":      "%2Fa%2520b%3Fx%3D1%26Y%3D2",
		"$args|$arg_y|$arg_x":       "x=1&Y=2|2|1",
		"$http_x_token$cookie_sid":  "txyz",
		"$remote_user@$remote_addr": "user@198.18.0.9",
		"a$":                        "a$",
	} {
		if got := v.expand(in); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

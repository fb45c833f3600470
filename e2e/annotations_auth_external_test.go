package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestExternalAuth checks ingress-nginx's external authentication
// (auth-url and the keys that shape it) through a real Envoy and the real
// authorisation service beside it (ingress-xds authz), with a real auth
// service: the echo backend's /auth/ handler, in a network namespace of its
// own (the service refuses to reach loopback), which answers like httpbun's
// /basic-auth/USER/PASSWORD that ingress-nginx's tests use and reports what
// its subrequest carried. Each scenario names the test of ingress-nginx's
// test/e2e/annotations/auth.go it mirrors, or nginx's auth_request
// documentation (https://nginx.org/en/docs/http/ngx_http_auth_request_module.html).
func TestExternalAuth(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	// The namespace exists before the authorisation service starts, so
	// that its host end is one of this host's addresses to the service.
	netns := framework.NewNetns(t)
	authAddr := netns.IP + ":8080"
	framework.StartProcess(t, "auth-service", netns.Command(framework.EchoBinary(t), "-listen", authAddr+"=auth"))
	// A second auth service, for the cache scenarios, which stop it.
	cachedAddr := netns.IP + ":8081"
	cachedAuth := framework.StartProcess(t, "auth-service-cached", netns.Command(framework.EchoBinary(t), "-listen", cachedAddr+"=auth-cached"))
	// An auth service on this host's own address: the authorisation
	// service must never ask it.
	own, ownAsked := ownAddressServer(t, netns.HostIP)
	waitListening(t, authAddr)
	waitListening(t, cachedAddr)

	auth := "http://" + authAddr
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"configmaps.yaml", `
apiVersion: v1
kind: ConfigMap
metadata: {name: auth-headers, namespace: default}
data: {My-Custom-Header: "42"}
`},
		manifest{"ingresses.yaml", strings.Join([]string{
			authIngress("signin", "signin.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/basic/user/password", "auth-signin": "http://$host/auth/start"}),
			authIngress("param", "param.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/basic/user/password", "auth-signin": "http://$host/auth/start", "auth-signin-redirect-param": "orig"}),
			authIngress("headers", "headers.example.com", "/", map[string]string{
				"auth-url":              auth + "/auth/basic/user/password?user=alice",
				"auth-response-headers": "X-User, Foo, X-Auth-Method, X-Auth-Host, X-Auth-Body, X-Auth-Saw-X-Original-Url, X-Auth-Saw-X-Original-Method, X-Auth-Saw-X-Forwarded-For, X-Auth-Saw-X-Real-Ip, X-Auth-Saw-X-Sent-From, X-Auth-Saw-X-Auth-Request-Redirect, X-Auth-Saw-X-Original-Uri, X-Auth-Saw-Authorization"}),
			authIngress("method", "method.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/status/200", "auth-method": "POST", "auth-request-redirect": "https://$host/back",
				"auth-proxy-set-headers": "default/auth-headers",
				"auth-response-headers":  "X-Auth-Method, X-Auth-Saw-X-Original-Uri, X-Auth-Saw-X-Scheme, X-Auth-Saw-My-Custom-Header, X-Auth-Saw-X-Auth-Request-Redirect"}),
			authIngress("snippet", "snippet.example.com", "/", map[string]string{
				"auth-url":              auth + "/auth/status/200",
				"auth-snippet":          "proxy_set_header My-Custom-Header 43;",
				"auth-response-headers": "X-Auth-Saw-My-Custom-Header"}),
			authIngress("authvars", "authvars.example.com", "/", map[string]string{
				"auth-url":              auth + "/auth/status/200?user=alice",
				"configuration-snippet": "auth_request_set $user $upstream_http_x_user;\nproxy_set_header X-Forwarded-User \"user:$user\";\n"}),
			authIngress("forbidden", "forbidden.example.com", "/", map[string]string{"auth-url": auth + "/auth/status/403"}),
			authIngress("notfound", "notfound.example.com", "/", map[string]string{"auth-url": auth + "/auth/status/404"}),
			authIngress("redirecting", "redirecting.example.com", "/", map[string]string{"auth-url": auth + "/auth/status/302"}),
			authIngress("down", "down.example.com", "/", map[string]string{"auth-url": "http://" + netns.IP + ":8089/auth/status/200"}),
			authIngress("own", "own.example.com", "/", map[string]string{"auth-url": "http://" + own + "/auth/status/200"}),
			authIngress("cookie", "cookie.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/status/200?cookie=alma=armud", "auth-signin": "http://$host/auth/start"}),
			authIngress("cookie-denied", "cookie-denied.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/status/403?cookie=alma=armud"}),
			authIngress("cookie-always", "cookie-always.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/status/403?cookie=alma=armud", "auth-always-set-cookie": "true"}),
			authIngress("cookie-always-allowed", "cookie-always-allowed.example.com", "/", map[string]string{
				"auth-url": auth + "/auth/status/200?cookie=alma=armud", "auth-always-set-cookie": "true"}),
			authIngress("cache-foo", "cache.example.com", "/foo", cacheAnnotations("http://"+cachedAddr)),
			authIngress("cache-bar", "cache.example.com", "/bar", cacheAnnotations("http://"+cachedAddr)),
			authIngress("cache-other", "cache2.example.com", "/foo", cacheAnnotations("http://"+cachedAddr)),
			authIngress("cache-signin", "cache3.example.com", "/foo", cacheAnnotations("http://"+cachedAddr)),
			authIngress("open", "open.example.com", "/", nil),
		}, "---\n")})
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		if err := envoy.Expect("open.example.com", "/", http.StatusOK, "alpha"); err != nil {
			return err
		}
		if r := authGet(envoy, "GET", "headers.example.com", "/", "user:password", nil); r.status != http.StatusOK {
			return fmt.Errorf("headers.example.com with credentials: %s", r)
		}
		return nil
	})

	// auth.go "should return status code 200 when signed in".
	t.Run("a request the auth service allows reaches the backend", func(t *testing.T) {
		for _, host := range []string{"signin.example.com", "param.example.com"} {
			if r := authGet(envoy, "GET", host, "/", "user:password", nil); r.status != http.StatusOK || r.backend != "alpha" {
				t.Errorf("%s with credentials: %s, want 200 from alpha", host, r)
			}
		}
	})

	// auth.go "should redirect to signin url when not signed in" (both
	// contexts: rd, and auth-signin-redirect-param "orig").
	t.Run("a 401 with auth-signin is a 302 to it with the escaped original URL", func(t *testing.T) {
		for host, param := range map[string]string{"signin.example.com": "rd", "param.example.com": "orig"} {
			r := authGet(envoy, "GET", host, "/?a=b&c=d", "", nil)
			want := fmt.Sprintf("http://%s/auth/start?%s=http://%s%s", host, param, host, url.QueryEscape("/?a=b&c=d"))
			if r.status != http.StatusFound || r.header.Get("Location") != want {
				t.Errorf("%s without credentials: %s, Location %q; want 302 to %q", host, r, r.header.Get("Location"), want)
			}
			if r.backend != "" {
				t.Errorf("%s without credentials reached backend %s", host, r.backend)
			}
		}
	})

	// nginx's auth_request: "If the subrequest returns 401 or 403, the
	// access is denied with the corresponding error code"; the 401's
	// WWW-Authenticate is passed.
	t.Run("401 and 403 are the client's answer", func(t *testing.T) {
		r := authGet(envoy, "GET", "headers.example.com", "/", "user:wrong", nil)
		if r.status != http.StatusUnauthorized || r.header.Get("WWW-Authenticate") != `Basic realm="Fake Realm"` || r.backend != "" {
			t.Errorf("wrong credentials: %s, WWW-Authenticate %q; want 401 with the auth service's challenge", r, r.header.Get("WWW-Authenticate"))
		}
		if r := authGet(envoy, "GET", "forbidden.example.com", "/", "", nil); r.status != http.StatusForbidden || r.backend != "" {
			t.Errorf("auth service 403: %s, want 403", r)
		}
	})

	// auth_request: "Any other response code returned by the subrequest
	// is considered an error" (500); auth.go's cache context gets 500
	// once the auth service is gone.
	t.Run("any other answer, or none, is 500", func(t *testing.T) {
		for _, host := range []string{"notfound.example.com", "redirecting.example.com", "down.example.com"} {
			if r := authGet(envoy, "GET", host, "/", "", nil); r.status != http.StatusInternalServerError || r.backend != "" {
				t.Errorf("%s: %s, want 500", host, r)
			}
		}
	})

	// auth.go "should overwrite Foo header with auth response", and the
	// subrequest of nginx.tmpl's auth location: no body, GET, Host the
	// auth-url's, X-Original-URL, X-Original-Method, X-Forwarded-For,
	// X-Real-IP, X-Sent-From, X-Auth-Request-Redirect, the client's
	// Authorization; X-Original-URI only with auth-method.
	t.Run("the subrequest is nginx's and auth-response-headers replace the client's", func(t *testing.T) {
		r := authGet(envoy, "POST", "headers.example.com", "/p/q?x=1", "user:password",
			map[string]string{"Foo": "bar", "X-User": "mallory"})
		if r.status != http.StatusOK {
			t.Fatalf("POST with credentials: %s", r)
		}
		got := r.reply.Header
		want := map[string]string{
			"X-User":                             "alice",
			"Foo":                                "",
			"X-Auth-Method":                      "GET",
			"X-Auth-Host":                        netns.IP,
			"X-Auth-Body":                        "0",
			"X-Auth-Saw-X-Original-Url":          "http://headers.example.com/p/q?x=1",
			"X-Auth-Saw-X-Original-Method":       "POST",
			"X-Auth-Saw-X-Forwarded-For":         "127.0.0.1",
			"X-Auth-Saw-X-Real-Ip":               "127.0.0.1",
			"X-Auth-Saw-X-Sent-From":             "nginx-ingress-controller",
			"X-Auth-Saw-X-Auth-Request-Redirect": "/p/q?x=1",
			"X-Auth-Saw-X-Original-Uri":          "",
			"X-Auth-Saw-Authorization":           "Basic dXNlcjpwYXNzd29yZA==",
		}
		for k, v := range want {
			if got.Get(k) != v {
				t.Errorf("backend saw %s = %q, want %q", k, got.Get(k), v)
			}
		}
		if r.reply.Query != "x=1" || r.reply.Path != "/p/q" {
			t.Errorf("backend got %s?%s, want the original /p/q?x=1", r.reply.Path, r.reply.Query)
		}
	})

	// auth.go `should set "proxy_set_header "My-Custom-Header" "42";" when
	// auth-headers are set`, and nginx.tmpl's auth location with
	// auth-method (X-Original-URI, X-Scheme) and auth-request-redirect.
	t.Run("auth-method, auth-request-redirect and auth-proxy-set-headers shape the subrequest", func(t *testing.T) {
		r := authGet(envoy, "GET", "method.example.com", "/m?z=2", "", nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET: %s", r)
		}
		for k, v := range map[string]string{
			"X-Auth-Method": "POST", "X-Auth-Saw-X-Original-Uri": "/m?z=2", "X-Auth-Saw-X-Scheme": "http",
			"X-Auth-Saw-My-Custom-Header": "42", "X-Auth-Saw-X-Auth-Request-Redirect": "https://method.example.com/back",
		} {
			if got := r.reply.Header.Get(k); got != v {
				t.Errorf("backend saw %s = %q, want %q", k, got, v)
			}
		}
	})

	// nginx.tmpl writes auth-snippet in the auth location, after its
	// proxy_set_header list: its proxy_set_header of a fixed value is a
	// header of the subrequest (docs/snippets.md).
	t.Run("auth-snippet's proxy_set_header reaches the auth service", func(t *testing.T) {
		r := authGet(envoy, "GET", "snippet.example.com", "/", "", nil)
		if r.status != http.StatusOK || r.reply.Header.Get("X-Auth-Saw-My-Custom-Header") != "43" {
			t.Errorf("%s, the auth service saw My-Custom-Header %q: want 43", r, r.reply.Header.Get("X-Auth-Saw-My-Custom-Header"))
		}
	})

	// ngx_http_auth_request_module's auth_request_set: the auth answer's
	// X-User, in a proxy_set_header of a configuration-snippet, reaches
	// the backend in place of the client's own (oauth2-proxy's snippet).
	t.Run("auth_request_set makes the upstream's header from the answer", func(t *testing.T) {
		r := authGet(envoy, "GET", "authvars.example.com", "/", "", map[string]string{"X-Forwarded-User": "mallory"})
		if r.status != http.StatusOK || r.reply.Header.Get("X-Forwarded-User") != "user:alice" {
			t.Errorf("%s, the backend saw X-Forwarded-User %q: want user:alice", r, r.reply.Header.Get("X-Forwarded-User"))
		}
	})

	// auth.go "cookie set by external authentication server": "user
	// retains cookie by default", "user does not retain cookie if upstream
	// returns error status code", "user with annotated ingress retains
	// cookie if upstream returns error status code"; and
	// auth-always-set-cookie passes it on the auth service's own 403,
	// which the default does not.
	t.Run("the auth service's cookies", func(t *testing.T) {
		if r := authGet(envoy, "GET", "cookie.example.com", "/?a=b&c=d", "", nil); r.status != http.StatusOK || !strings.Contains(r.header.Get("Set-Cookie"), "alma=armud") {
			t.Errorf("allowed: %s, Set-Cookie %q; want 200 with alma=armud", r, r.header.Get("Set-Cookie"))
		}
		r := authGet(envoy, "GET", "cookie.example.com", "/error?status=503", "", nil)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Set-Cookie") != "" {
			t.Errorf("allowed, the backend answering 503: %s, Set-Cookie %q; want 503 without", r, r.header.Get("Set-Cookie"))
		}
		if r := authGet(envoy, "GET", "cookie-always-allowed.example.com", "/error?status=503", "", nil); r.status != http.StatusServiceUnavailable || !strings.Contains(r.header.Get("Set-Cookie"), "alma=armud") {
			t.Errorf("allowed with auth-always-set-cookie, the backend answering 503: %s, Set-Cookie %q; want 503 with alma=armud", r, r.header.Get("Set-Cookie"))
		}
		for _, host := range []string{"cookie.example.com", "cookie-always-allowed.example.com"} {
			for _, path := range []string{"/", "/error?status=503"} {
				if r := authGet(envoy, "GET", host, path, "", nil); r.header.Get("X-Ingress-Xds-Auth-Cookie") != "" {
					t.Errorf("%s%s: the service's cookie header reached the client", host, path)
				}
			}
		}
		if r := authGet(envoy, "GET", "cookie-denied.example.com", "/", "", nil); r.status != http.StatusForbidden || r.header.Get("Set-Cookie") != "" {
			t.Errorf("denied without auth-always-set-cookie: %s, Set-Cookie %q; want 403 without", r, r.header.Get("Set-Cookie"))
		}
		if r := authGet(envoy, "GET", "cookie-always.example.com", "/", "", nil); r.status != http.StatusForbidden || !strings.Contains(r.header.Get("Set-Cookie"), "alma=armud") {
			t.Errorf("denied with auth-always-set-cookie: %s, Set-Cookie %q; want 403 with alma=armud", r, r.header.Get("Set-Cookie"))
		}
	})

	// The authorisation service never connects to this host's own
	// addresses (nor loopback, link-local...): 500, and the server there
	// was never asked. ingress-nginx has no such rule (docs/security.md).
	t.Run("an auth-url on this host's own address is never asked", func(t *testing.T) {
		if r := authGet(envoy, "GET", "own.example.com", "/", "", nil); r.status != http.StatusInternalServerError {
			t.Errorf("auth-url on %s: %s, want 500", own, r)
		}
		if n := ownAsked.Load(); n != 0 {
			t.Errorf("the server on this host's own address was asked %d times", n)
		}
	})

	// auth.go "when external authentication with caching is configured":
	// "should return status code 200 when signed in after auth backend is
	// deleted", "should deny login for different location on same
	// server", "should deny login for different servers", "should
	// redirect to signin url when not signed in". Last: it stops the
	// cached auth service.
	t.Run("cached answers outlive the auth service, per host and path", func(t *testing.T) {
		// On a host of its own: the 401 it caches under the fixed key
		// would answer the others.
		want := "http://cache3.example.com/auth/start?rd=http://cache3.example.com" + url.QueryEscape("/foo?a=b&c=d")
		if r := authGet(envoy, "GET", "cache3.example.com", "/foo?a=b&c=d", "", nil); r.status != http.StatusFound || r.header.Get("Location") != want {
			t.Errorf("cache3.example.com/foo without credentials: %s, Location %q; want 302 to %q", r, r.header.Get("Location"), want)
		}
		if r := authGet(envoy, "GET", "cache.example.com", "/foo", "user:password", nil); r.status != http.StatusOK {
			t.Fatalf("cache.example.com/foo signed in: %s, want 200", r)
		}
		cachedAuth.Stop()
		if r := authGet(envoy, "GET", "cache.example.com", "/foo", "user:password", nil); r.status != http.StatusOK {
			t.Errorf("cache.example.com/foo signed in, auth service gone: %s, want 200 (cached)", r)
		}
		if r := authGet(envoy, "GET", "cache.example.com", "/bar", "user:password", nil); r.status != http.StatusInternalServerError {
			t.Errorf("cache.example.com/bar, auth service gone: %s, want 500 (another location)", r)
		}
		if r := authGet(envoy, "GET", "cache2.example.com", "/foo", "user:password", nil); r.status != http.StatusInternalServerError {
			t.Errorf("cache2.example.com/foo, auth service gone: %s, want 500 (another server)", r)
		}
	})
}

func cacheAnnotations(auth string) map[string]string {
	return map[string]string{
		"auth-url": auth + "/auth/basic/user/password", "auth-signin": "http://$host/auth/start",
		"auth-cache-key": "fixed", "auth-cache-duration": "200 201 401 30m",
	}
}

// authIngress is an Ingress of host and path to alpha with the
// annotations (under ingress-nginx's prefix).
func authIngress(name, host, path string, annotations map[string]string) string {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: default\n", name)
	if len(keys) > 0 {
		b.WriteString("  annotations:\n")
		for _, k := range keys {
			v, _ := json.Marshal(annotations[k])
			fmt.Fprintf(&b, "    nginx.ingress.kubernetes.io/%s: %s\n", k, v)
		}
	}
	fmt.Fprintf(&b, "spec:\n  rules:\n  - host: %s\n    http: {paths: [{path: %s, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}\n", host, path)
	return b.String()
}

// authReply is what a client got through Envoy.
type authReply struct {
	status  int
	header  http.Header
	backend string
	reply   echo.Reply
	err     error
}

func (r authReply) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("%d (backend %q)", r.status, r.backend)
}

// authGet sends one request, with Basic credentials "user:password" when
// given, not following redirects.
func authGet(envoy *framework.Envoy, method, host, path, credentials string, headers map[string]string) authReply {
	req, err := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, strings.NewReader(strings.Repeat("b", 16)))
	if err != nil {
		return authReply{err: err}
	}
	req.Host = host
	if user, pass, ok := strings.Cut(credentials, ":"); ok {
		req.SetBasicAuth(user, pass)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return authReply{err: err}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := authReply{status: resp.StatusCode, header: resp.Header, backend: resp.Header.Get("X-Backend")}
	if r.backend != "" {
		_ = json.Unmarshal(body, &r.reply)
	}
	return r
}

// ownAddressServer serves on addr (one of this host's addresses) and
// counts the requests it gets.
func ownAddressServer(t *testing.T, addr string) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), &asked
}

// waitListening waits until something accepts connections on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, addr+" listening", func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return err
		}
		return c.Close()
	})
}

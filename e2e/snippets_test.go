package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// snippetAnswer is what one request through Envoy got.
type snippetAnswer struct {
	status int
	header http.Header
	body   string
	// seen is what the backend received; nil when Envoy answered.
	seen *echo.Reply
}

// snippetRequest sends one request on a new connection, without following
// redirects.
func snippetRequest(t *testing.T, envoy *framework.Envoy, method, host, path string, header map[string]string) snippetAnswer {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, host, path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := snippetAnswer{status: resp.StatusCode, header: resp.Header, body: string(body)}
	if resp.Header.Get("X-Backend") != "" && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var r echo.Reply
		if json.Unmarshal(body, &r) == nil {
			a.seen = &r
		}
	}
	return a
}

// TestSnippets proves the snippet directives ingress-xds translates
// through a real Envoy, each against the behaviour of ingress-nginx's nginx
// it names: ingress-nginx's test/e2e/annotations/snippet.go and
// serversnippet.go, and nginx's own documentation of each directive
// (headers-more's README for more_set_headers and more_clear_headers,
// ngx_http_headers_module for add_header, ngx_http_proxy_module for
// proxy_set_header and proxy_hide_header, ngx_http_rewrite_module for
// return, rewrite, if and set, ngx_http_access_module for allow and deny,
// ngx_http_core_module for location).
func TestSnippets(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	h2c := startH2CEcho(t, "h2c")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha)+portService("h2c", h2c))
	writeManifest(t, dir, "ingresses.yaml", snippetsYAML)
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	for _, host := range []string{"headers.example", "rewrites.example", "slashes.example", "access.example", "open.example", "server.example", "nested.example", "conditions.example", "inert.example", "grpc.example", "expires.example", "forwarded.example", "realip.example", "host.example", "vhost.example"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			r, err := envoy.Get(host, "/probe")
			if err != nil {
				return err
			}
			if r.Status == http.StatusNotFound || r.Status == http.StatusServiceUnavailable {
				return fmt.Errorf("%s: %s", host, r)
			}
			return nil
		})
	}

	// snippet.go "set snippet more_set_headers in all locations":
	// more_set_headers replaces the backend's header, on every status
	// (headers-more: "Replace (if any) or add (if not any) the specified
	// output headers"), whatever the status.
	t.Run("more_set_headers replaces on every status", func(t *testing.T) {
		for _, path := range []string{"/?header=X-Frame-Options:SAMEORIGIN", "/?status=500"} {
			a := snippetRequest(t, envoy, http.MethodGet, "headers.example", path, nil)
			if got := a.header.Values("X-Frame-Options"); !slices.Equal(got, []string{"DENY"}) {
				t.Errorf("%s: X-Frame-Options %q, want [DENY] alone", path, got)
			}
			if got := a.header.Get("X-Served-For"); got != "headers.example" {
				t.Errorf("%s: X-Served-For %q, want $host, headers.example", path, got)
			}
		}
		a := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/?header=X-Powered-By:php", nil)
		if got := a.header.Get("X-Powered-By"); got != "" {
			t.Errorf("more_clear_headers X-Powered-By: the client got %q", got)
		}
		// headers-more's parser ends the name at a colon or white space
		// (ngx_http_headers_more_util.c).
		if got := a.header.Get("X-Split"); got != "yes" {
			t.Errorf(`more_set_headers "X-Split   yes": X-Split %q, want yes`, got)
		}
	})

	// ngx_http_headers_module: add_header adds "if the response code
	// equals 200, 201, 204, 206, 301, 302, 303, 304, 307, or 308", on
	// every code with "always"; beside the backend's own of the name.
	t.Run("add_header on success statuses, always on all", func(t *testing.T) {
		ok := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/?header=X-Cache:backend", nil)
		if got := ok.header.Values("X-Cache"); !slices.Equal(got, []string{"backend", "HIT"}) {
			t.Errorf("200: X-Cache %q, want the backend's and the snippet's", got)
		}
		if got := ok.header.Get("Strict-Transport-Security"); got != "max-age=63072000" {
			t.Errorf("200: Strict-Transport-Security %q", got)
		}
		failed := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/?status=500", nil)
		if got := failed.header.Values("X-Cache"); len(got) != 0 {
			t.Errorf("500: X-Cache %q, want none (add_header without always)", got)
		}
		if got := failed.header.Get("Strict-Transport-Security"); got != "max-age=63072000" {
			t.Errorf("500: Strict-Transport-Security %q, want it (always)", got)
		}
		// No backend can hand the filter headers of its own.
		forged := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/?header=X-Ingress-Xds-Add-On-Success:X-Evil:1", nil)
		if forged.header.Get("X-Evil") != "" || forged.header.Get("X-Ingress-Xds-Add-On-Success") != "" {
			t.Errorf("a backend's own carrier header reached the client: %v", forged.header)
		}
	})

	// ngx_http_proxy_module: proxy_set_header sets the upstream's header
	// in place of the client's; for a header ingress-nginx's template
	// already sets (X-Forwarded-Proto), nginx 1.27.1 sends both lines;
	// proxy_hide_header drops the upstream's; more_clear_input_headers
	// the client's.
	t.Run("request headers", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/?header=X-Backend-Secret:s", map[string]string{"X-Debug": "1", "X-Client-Addr": "forged", "X-Tenant": "red",
			"X-Auth-Source": "forged", "Ssl-Client-Cert": "forged"})
		if a.seen == nil {
			t.Fatalf("%d %q: not the backend's", a.status, a.body)
		}
		if got := a.seen.Header.Get("X-Original-Path"); got != "/" {
			t.Errorf("X-Original-Path %q, want $uri, / without the query", got)
		}
		if got := a.seen.Header.Values("X-Client-Addr"); !slices.Equal(got, []string{"127.0.0.1"}) {
			t.Errorf("X-Client-Addr %q, want $remote_addr alone", got)
		}
		// A value that comes out empty (no X-Upstream-Auth; no client
		// certificate over plain HTTP) sends no header, and never the
		// client's own of the name.
		for _, h := range []string{"X-Auth-Source", "Ssl-Client-Cert"} {
			if got := a.seen.Header.Values(h); len(got) != 0 {
				t.Errorf("%s %q reached the backend, want none", h, got)
			}
		}
		// nginx.tmpl sets $service_name, $namespace and $service_port in
		// the location before the snippet.
		if got := a.seen.Header.Get("L5d-Dst-Override"); got != "alpha.default.svc.cluster.local:80" {
			t.Errorf("l5d-dst-override %q, want the location's service, namespace and port", got)
		}
		b := snippetRequest(t, envoy, http.MethodGet, "headers.example", "/", map[string]string{"X-Upstream-Auth": "sso"})
		if b.seen == nil || b.seen.Header.Get("X-Auth-Source") != "sso" {
			t.Errorf("X-Upstream-Auth sso: the backend got X-Auth-Source %v, want sso", b.seen)
		}
		// Envoy joins the two lines into one list, which HTTP defines as
		// the same field (RFC 9110, 5.3).
		if got := a.seen.Header.Values("X-Forwarded-Proto"); strings.Join(got, ",") != "http,https" {
			t.Errorf("X-Forwarded-Proto %q, want the template's and the snippet's", got)
		}
		if got := a.seen.Header.Get("X-Debug"); got != "" {
			t.Errorf("X-Debug %q reached the backend", got)
		}
		// headers-more's more_set_input_headers replaces the client's;
		// a header ingress-nginx's template sets (X-Real-IP) is the
		// template's, as nginx never copies the client's.
		if got := a.seen.Header.Values("X-Tenant"); !slices.Equal(got, []string{"blue"}) {
			t.Errorf("X-Tenant %q, want more_set_input_headers' blue", got)
		}
		if got := a.seen.Header.Get("X-Real-IP"); got != "127.0.0.1" {
			t.Errorf("X-Real-IP %q, want the template's $remote_addr", got)
		}
		if got := a.header.Get("X-Backend-Secret"); got != "" {
			t.Errorf("X-Backend-Secret %q reached the client", got)
		}
	})

	// ngx_http_proxy_module: $proxy_add_x_forwarded_for is "the
	// X-Forwarded-For client request header field with the $remote_addr
	// variable appended to it, separated by a comma", or $remote_addr
	// alone without one; the snippet's line goes beside the template's
	// X-Forwarded-For $remote_addr (nginx.tmpl, without
	// compute-full-forwarded-for), and Envoy joins the two into one list.
	t.Run("proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for", func(t *testing.T) {
		for _, c := range []struct {
			sent string
			want []string
		}{
			{"", []string{"127.0.0.1", "127.0.0.1"}},
			{"1.2.3.4", []string{"127.0.0.1", "1.2.3.4", "127.0.0.1"}},
			{"1.2.3.4, 5.6.7.8", []string{"127.0.0.1", "1.2.3.4", "5.6.7.8", "127.0.0.1"}},
		} {
			var header map[string]string
			if c.sent != "" {
				header = map[string]string{"X-Forwarded-For": c.sent}
			}
			a := snippetRequest(t, envoy, http.MethodGet, "forwarded.example", "/", header)
			if a.seen == nil {
				t.Fatalf("X-Forwarded-For %q: %d %q, not the backend's", c.sent, a.status, a.body)
			}
			if got := listValues(a.seen.Header, "X-Forwarded-For"); !slices.Equal(got, c.want) {
				t.Errorf("client's X-Forwarded-For %q: the backend got %q, want %q", c.sent, got, c.want)
			}
			// The template's X-Original-Forwarded-For, which the route
			// reads, is still the client's header.
			if got := a.seen.Header.Get("X-Original-Forwarded-For"); got != c.sent {
				t.Errorf("client's X-Forwarded-For %q: X-Original-Forwarded-For %q", c.sent, got)
			}
		}
	})

	// ngx_http_realip_module: without set_real_ip_from (ingress-nginx
	// writes it only with use-forwarded-headers or enable-real-ip) a
	// server-snippet's real_ip_header changes nothing: the client is the
	// peer, whatever header it sends.
	t.Run("real_ip_header without the realip module", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "realip.example", "/", map[string]string{"X-Client-Address": "9.9.9.9"})
		if a.seen == nil {
			t.Fatalf("%d %q: not the backend's", a.status, a.body)
		}
		if got := a.seen.Header.Get("X-Real-IP"); got != "127.0.0.1" {
			t.Errorf("X-Real-IP %q, want the peer, 127.0.0.1", got)
		}
	})

	// ngx_http_rewrite_module: if, set, return and rewrite, in order, the
	// first return ending the phase; a redirecting rewrite appends the
	// request's arguments; rewrite ... break forwards the new path.
	t.Run("if, set, return and rewrite", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "rewrites.example", "/shop?item=1", map[string]string{"User-Agent": "Mozilla/5.0 (iPhone)"})
		if a.status != http.StatusFound || a.header.Get("Location") != "https://m.example/shop?item=1" {
			t.Errorf("a phone: %d Location %q, want 302 to https://m.example$request_uri", a.status, a.header.Get("Location"))
		}
		a = snippetRequest(t, envoy, http.MethodDelete, "rewrites.example", "/x", nil)
		if a.status != http.StatusMethodNotAllowed || a.body != "no deletes\n" || a.header.Get("Content-Type") != "text/html" {
			t.Errorf("DELETE: %d %q (%s), want return 405's text as text/html", a.status, a.body, a.header.Get("Content-Type"))
		}
		a = snippetRequest(t, envoy, http.MethodGet, "rewrites.example", "/old/page?q=2", nil)
		if a.status != http.StatusMovedPermanently || a.header.Get("Location") != "http://rewrites.example/new/page?q=2" {
			t.Errorf("/old/page: %d Location %q, want 301 to /new/page with the query", a.status, a.header.Get("Location"))
		}
		a = snippetRequest(t, envoy, http.MethodGet, "rewrites.example", "/api/v1/users?id=3", nil)
		if a.seen == nil || a.seen.Path != "/v1/users" || a.seen.Query != "id=3" {
			t.Errorf("/api/v1/users: %d %+v, want the backend to see /v1/users?id=3", a.status, a.seen)
		}
		a = snippetRequest(t, envoy, http.MethodGet, "rewrites.example", "/plain", map[string]string{"User-Agent": "curl"})
		if a.seen == nil || a.seen.Path != "/plain" {
			t.Errorf("/plain: %d %q, want the backend", a.status, a.body)
		}
	})

	// ngx_http_rewrite_module: a replacement that is not http://,
	// https:// or $scheme is a URI, here one starting with a capture that
	// starts with a /: the redirect's Location is that path with the
	// request's scheme and host, and the request's arguments appended,
	// as for a replacement written with its /. The usual "add a trailing
	// slash" leaves a path that ends with one alone.
	t.Run("rewrite to a path that starts with a capture", func(t *testing.T) {
		for _, c := range []struct{ path, status, location string }{
			{"/docs?page=2", "301", "http://slashes.example/docs/?page=2"},
			{"/a/b.html", "301", "http://slashes.example/a/b.html/"},
			{"/old/abc", "302", "http://slashes.example/abc/new"},
			{"/oldabc", "301", "http://slashes.example/oldabc/"},
		} {
			a := snippetRequest(t, envoy, http.MethodGet, "slashes.example", c.path, nil)
			if strconv.Itoa(a.status) != c.status || a.header.Get("Location") != c.location {
				t.Errorf("%s: %d Location %q, want %s to %s", c.path, a.status, a.header.Get("Location"), c.status, c.location)
			}
		}
		a := snippetRequest(t, envoy, http.MethodGet, "slashes.example", "/docs/", nil)
		if a.seen == nil || a.seen.Path != "/docs/" {
			t.Errorf("/docs/: %d %q, want the backend", a.status, a.body)
		}
	})

	// ngx_http_access_module: allow 10.0.0.0/8 then deny all refuses
	// 127.0.0.1 with 403; a return answers in the rewrite phase, before
	// the access phase ever runs.
	t.Run("allow and deny, and return before them", func(t *testing.T) {
		if a := snippetRequest(t, envoy, http.MethodGet, "access.example", "/", nil); a.status != http.StatusForbidden {
			t.Errorf("access.example: %d, want 403", a.status)
		}
		if a := snippetRequest(t, envoy, http.MethodGet, "open.example", "/", nil); a.status != http.StatusOK || a.body != "open" {
			t.Errorf("open.example: %d %q, want return's 200 before deny all", a.status, a.body)
		}
	})

	// ngx_http_rewrite_module's if conditions on nginx's variables, each
	// read from the request as nginx reads it: $scheme (the client's
	// connection), $host (lower case), $request_uri (with the query),
	// $uri (without), a header absent being empty, a variable alone
	// holding unless empty or "0".
	t.Run("if conditions on nginx's variables", func(t *testing.T) {
		for _, tc := range []struct {
			path   string
			header map[string]string
			status int
		}{
			{"/plain", nil, http.StatusOK},
			{"/scheme", nil, 421}, // plain HTTP: $scheme is http
			{"/page?debug=1", nil, 422},
			{"/page.php?x=1", nil, 423},
			{"/page.phps", nil, http.StatusOK},
			{"/token", nil, 424},                               // X-Token absent: empty
			{"/token", map[string]string{"X-Token": "0"}, 424}, // "0" is false
			{"/token", map[string]string{"X-Token": "abc"}, http.StatusOK},
		} {
			a := snippetRequest(t, envoy, http.MethodGet, "conditions.example", tc.path, tc.header)
			if a.status != tc.status {
				t.Errorf("%s %v: %d, want %d", tc.path, tc.header, a.status, tc.status)
			}
		}
		// $host is the Host lower-cased.
		if a := snippetRequest(t, envoy, http.MethodGet, "CONDITIONS.example", "/host", nil); a.status != 425 {
			t.Errorf("Host CONDITIONS.example: %d, want 425 ($host = conditions.example)", a.status)
		}
	})

	// ngx_http_core_module: a location nested in the Ingress's is chosen
	// before the outer location's rewrite phase, and inherits its
	// headers.
	t.Run("a nested location", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "nested.example", "/app/.env", nil)
		if a.status != http.StatusForbidden || a.header.Get("X-Outer") != "1" {
			t.Errorf("/app/.env: %d, X-Outer %q: want the nested location's 403 with the outer's header", a.status, a.header.Get("X-Outer"))
		}
		a = snippetRequest(t, envoy, http.MethodGet, "nested.example", "/app/x", nil)
		if a.seen == nil || a.header.Get("X-Outer") != "1" {
			t.Errorf("/app/x: %d: want the backend with the outer's header", a.status)
		}
	})

	// Directives of no effect where ingress-nginx's location proxies
	// plain HTTP, as in nginx: proxy_ssl_* (ngx_http_proxy_module: for
	// https:// only), grpc_set_header (grpc_pass's), error_page of a
	// status the location never answers itself (ngx_http_core_module:
	// the backend's answers pass, proxy_intercept_errors being off),
	// etag (ngx_http_core_module: the files nginx serves), grpc_pass's
	// settings (ngx_http_grpc_module), and proxy_pass_header of a header
	// nginx does not hide.
	t.Run("directives of no effect here", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "inert.example", "/?status=403&header=ETag:%22v1%22", map[string]string{"If-Match": `"v0"`})
		if a.status != http.StatusForbidden || a.seen == nil || a.header.Get("Location") != "" {
			t.Fatalf("backend's 403: %d, Location %q: want it passed through, not the error page", a.status, a.header.Get("Location"))
		}
		if got := a.header.Get("ETag"); got != `"v1"` {
			t.Errorf("ETag %q, want the backend's", got)
		}
		for _, h := range []string{"X-Tenant", "If-Match"} {
			if got := a.seen.Header.Get(h); got != "" {
				t.Errorf("the backend got %s %q, want none", h, got)
			}
		}
	})

	// ngx_http_proxy_module: proxy_set_header Host $host in ingress-nginx's
	// location is a second Host line after the template's own
	// ($best_http_host, or upstream-vhost's: nginx.tmpl), which nginx
	// 1.27.1 sends both of (proxy_init_headers); a backend reading the
	// first line gets the template's. Envoy sends that line alone: the
	// echo backend, Go's server, refuses two Host lines as RFC 9112 asks.
	t.Run("proxy_set_header Host $host", func(t *testing.T) {
		for host, want := range map[string]string{"host.example": "host.example", "vhost.example": "internal.example"} {
			a := snippetRequest(t, envoy, http.MethodGet, host, "/", nil)
			if a.seen == nil || a.seen.Host != want {
				t.Errorf("%s: %d %q: want the backend, reached with Host %s", host, a.status, a.body, want)
			}
		}
	})

	// ngx_http_headers_module's expires: on 200, 201, 204, 206, 301, 302,
	// 303, 304, 307 and 308 it replaces Expires with the date that far
	// from now and every Cache-Control with one max-age (no-cache when
	// negative; epoch and max fixed dates), before add_header's headers;
	// on other statuses it does nothing.
	t.Run("expires", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "expires.example", "/?header=Cache-Control:no-store&header=Expires:0", nil)
		// Envoy joins the two lines nginx sends into one list: the same
		// field in HTTP.
		if got := listValues(a.header, "Cache-Control"); !slices.Equal(got, []string{"max-age=2592000", "public"}) {
			t.Errorf("200: Cache-Control %q, want expires' max-age then add_header's", got)
		}
		date, err := http.ParseTime(a.header.Get("Date"))
		if err != nil {
			t.Fatalf("Date %q: %v", a.header.Get("Date"), err)
		}
		expires, err := http.ParseTime(a.header.Get("Expires"))
		if d := expires.Sub(date) - 30*24*time.Hour; err != nil || d < -2*time.Second || d > 2*time.Second {
			t.Errorf("200: Expires %q beside Date %q (%v): want 30 days later", a.header.Get("Expires"), a.header.Get("Date"), err)
		}
		failed := snippetRequest(t, envoy, http.MethodGet, "expires.example", "/?status=500&header=Cache-Control:no-store", nil)
		if got := failed.header.Values("Cache-Control"); !slices.Equal(got, []string{"no-store"}) || failed.header.Get("Expires") != "" {
			t.Errorf("500: Cache-Control %q, Expires %q: want the backend's alone", got, failed.header.Get("Expires"))
		}
		for path, want := range map[string][2]string{
			"/old":     {"Thu, 01 Jan 1970 00:00:01 GMT", "no-cache"},
			"/forever": {"Thu, 31 Dec 2037 23:55:55 GMT", "max-age=315360000"},
		} {
			a := snippetRequest(t, envoy, http.MethodGet, "expires.example", path, nil)
			if a.status != http.StatusOK || a.header.Get("Expires") != want[0] || a.header.Get("Cache-Control") != want[1] {
				t.Errorf("%s: %d, Expires %q, Cache-Control %q: want %q", path, a.status, a.header.Get("Expires"), a.header.Get("Cache-Control"), want)
			}
		}
		stale := snippetRequest(t, envoy, http.MethodGet, "expires.example", "/stale", nil)
		if got := stale.header.Get("Cache-Control"); got != "no-cache" || stale.header.Get("Expires") == "" {
			t.Errorf("/stale: Cache-Control %q, Expires %q: want no-cache and a date", got, stale.header.Get("Expires"))
		}
	})

	// With backend-protocol GRPC the location proxies with grpc_pass:
	// grpc_set_header sets the header and proxy_set_header (proxy_pass's
	// list) has no effect (ngx_http_grpc_module). The backend here speaks
	// HTTP/2 without TLS, as grpc_pass's does.
	t.Run("grpc_set_header with grpc_pass", func(t *testing.T) {
		a := snippetRequest(t, envoy, http.MethodGet, "grpc.example", "/", nil)
		if a.seen == nil {
			t.Fatalf("%d %q: want the h2c backend", a.status, a.body)
		}
		if got := a.seen.Header.Get("X-Tenant"); got != "blue" {
			t.Errorf("X-Tenant %q, want grpc_set_header's blue", got)
		}
		if got := a.seen.Header.Get("X-Ignored"); got != "" {
			t.Errorf("X-Ignored %q: proxy_set_header applied under grpc_pass", got)
		}
	})

	// serversnippet.go "add valid directives to server via server
	// snippet" (its more_set_headers reach every path of the host), and
	// ngx_http_core_module's location selection: = first, then regular
	// expressions, then the longest prefix; a server-level return before
	// any location.
	t.Run("server-snippet", func(t *testing.T) {
		for _, path := range []string{"/", "/app/x"} {
			a := snippetRequest(t, envoy, http.MethodGet, "server.example", path, nil)
			if a.seen == nil || a.header.Get("X-Server") != "snippet" {
				t.Errorf("%s: %d, X-Server %q: want the backend with the server's header", path, a.status, a.header.Get("X-Server"))
			}
		}
		a := snippetRequest(t, envoy, http.MethodGet, "server.example", "/app", map[string]string{"X-Legacy": "1"})
		if a.status != http.StatusMovedPermanently || a.header.Get("Location") != "https://server.example/app" {
			t.Errorf("X-Legacy 1: %d Location %q", a.status, a.header.Get("Location"))
		}
		a = snippetRequest(t, envoy, http.MethodGet, "server.example", "/robots.txt", nil)
		if a.status != http.StatusOK || a.body != "User-agent: *\nDisallow: /\n" || a.header.Get("X-Server") != "snippet" {
			t.Errorf("/robots.txt: %d %q (X-Server %q)", a.status, a.body, a.header.Get("X-Server"))
		}
		for _, path := range []string{"/.git", "/app/.ENV"} {
			if a := snippetRequest(t, envoy, http.MethodGet, "server.example", path, nil); a.status != http.StatusForbidden {
				t.Errorf("%s: %d, want the regex location's 403", path, a.status)
			}
		}
		// location /metrics is a prefix of strings: /metricsx too. Its
		// return answers before its allow and deny.
		for _, path := range []string{"/metrics", "/metricsx"} {
			if a := snippetRequest(t, envoy, http.MethodGet, "server.example", path, nil); a.status != http.StatusNotFound {
				t.Errorf("%s: %d, want the location's 404", path, a.status)
			}
		}
	})
}

// TestSnippetsFromTheConfigMap: the controller ConfigMap's server-snippet
// in every server (ingress-nginx's test/e2e/settings/server_snippet.go
// "should add value of server-snippet setting to all ingress config") and
// location-snippet in every location (nginx.tmpl writes it after the
// configuration-snippet), whatever allow-snippet-annotations says; and
// allow-snippet-annotations false dropping an Ingress's snippet at risk
// level Critical (server_snippet.go "should add global server-snippet and
// drop annotations per admin config", test/e2e/annotations/snippet.go
// "drops snippet more_set_header in all locations if disabled by admin").
func TestSnippetsFromTheConfigMap(t *testing.T) {
	envoy := startWithControllerConfigMap(t, map[string]string{
		"annotations-risk-level": "Critical",
		"location-snippet":       "more_set_headers \"X-Location: cm\";\nif ($request_method = TRACE) { return 405; }\n",
		"server-snippet":         "more_set_headers \"X-Server: cm\";\nlocation = /healthz { return 200 \"ok\"; }\n",
		// Declarations alone do nothing, in nginx as here.
		"http-snippet": "limit_req_zone $binary_remote_addr zone=api:10m rate=10r/s;\n",
	}, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: dropped
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: 'more_set_headers "X-Dropped: 1";'
spec:
  rules: [{host: cm.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`)
	framework.Eventually(t, convergeTimeout, "cm.example served", func() error {
		return envoy.Expect("cm.example", "/", http.StatusOK, "alpha")
	})
	a := snippetRequest(t, envoy, http.MethodGet, "cm.example", "/", nil)
	if a.header.Get("X-Location") != "cm" || a.header.Get("X-Server") != "cm" || a.header.Get("X-Dropped") != "" {
		t.Errorf("/: X-Location %q, X-Server %q, X-Dropped %q: want the ConfigMap's snippets and not the dropped annotation's",
			a.header.Get("X-Location"), a.header.Get("X-Server"), a.header.Get("X-Dropped"))
	}
	if a := snippetRequest(t, envoy, "TRACE", "cm.example", "/", nil); a.status != http.StatusMethodNotAllowed {
		t.Errorf("TRACE: %d, want the location-snippet's 405", a.status)
	}
	if a := snippetRequest(t, envoy, http.MethodGet, "cm.example", "/healthz", nil); a.status != http.StatusOK || a.body != "ok" {
		t.Errorf("/healthz: %d %q, want the server-snippet location's 200", a.status, a.body)
	}
}

// TestSnippetProxyAddForwardedForFull: with use-forwarded-headers and
// compute-full-forwarded-for, nginx's $remote_addr is the client the
// realip module found (here past the one proxy ingress-xds trusts), so
// $proxy_add_x_forwarded_for is the client's X-Forwarded-For then that
// address, while the template's own line is $full_x_forwarded_for, the
// header then the peer (nginx.tmpl: "We can't use
// $proxy_add_x_forwarded_for because the realip module replaces the
// remote_addr too soon").
func TestSnippetProxyAddForwardedForFull(t *testing.T) {
	envoy := startWithControllerConfigMap(t, map[string]string{
		"annotations-risk-level":     "Critical",
		"allow-snippet-annotations":  "true",
		"use-forwarded-headers":      "true",
		"compute-full-forwarded-for": "true",
	}, forwardedSnippetYAML)
	framework.Eventually(t, convergeTimeout, "forwarded.example served", func() error {
		return envoy.Expect("forwarded.example", "/", http.StatusOK, "alpha")
	})
	// From a network namespace: Envoy writes its host's own address for
	// a loopback peer where it appends the peer.
	client := framework.NewNetns(t).Client()
	peer := client.IP
	_, port, err := net.SplitHostPort(envoy.HTTPAddress)
	if err != nil {
		t.Fatal(err)
	}
	httpPort, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sent http.Header
		want []string
	}{
		{nil, []string{peer, peer}},
		{http.Header{"X-Forwarded-For": {"1.2.3.4"}}, []string{"1.2.3.4", peer, "1.2.3.4", "1.2.3.4"}},
	} {
		r, err := client.Get(httpPort, "forwarded.example", "/", c.sent)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusOK {
			t.Fatalf("X-Forwarded-For %q: %d, not the backend's", c.sent, r.Status)
		}
		if got := listValues(r.Echo.Header, "X-Forwarded-For"); !slices.Equal(got, c.want) {
			t.Errorf("client's X-Forwarded-For %q: the backend got %q, want %q", c.sent.Get("X-Forwarded-For"), got, c.want)
		}
	}
}

// startWithControllerConfigMap serves ingresses (YAML, their backends
// the echo backend alpha) under the controller ConfigMap data, through a
// real Envoy that must reject nothing.
func startWithControllerConfigMap(t *testing.T, data map[string]string, ingresses string) *framework.Envoy {
	t.Helper()
	alpha := echoBackends(t, "alpha")[0]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(data))
	writeManifest(t, dir, "ingresses.yaml", ingresses)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	return envoy
}

// listValues are the elements of a list header, over its lines.
func listValues(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, e := range strings.Split(v, ",") {
			out = append(out, strings.TrimSpace(e))
		}
	}
	return out
}

// TestSnippetLimitReq: a configuration-snippet's limit_req of a zone the
// ConfigMap's http-snippet declares per client address refuses, once the
// client's burst is spent, with limit_req_status (ngx_http_limit_req_module:
// burst=2 nodelay lets three requests through at once; the zone's rate of
// one a minute refills after the test).
func TestSnippetLimitReq(t *testing.T) {
	envoy := startWithControllerConfigMap(t, map[string]string{
		"annotations-risk-level":    "Critical",
		"allow-snippet-annotations": "true",
		"http-snippet":              "limit_req_zone $binary_remote_addr zone=api:10m rate=1r/m;\n",
	}, `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: limited
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      limit_req zone=api burst=2 nodelay;
      limit_req_status 429;
spec:
  rules: [{host: limited.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`)
	// The first answer that is not a 404 is the route's first request.
	var statuses []int
	framework.Eventually(t, convergeTimeout, "limited.example served", func() error {
		a := snippetRequest(t, envoy, http.MethodGet, "limited.example", "/", nil)
		if a.status == http.StatusNotFound {
			return fmt.Errorf("%d", a.status)
		}
		statuses = append(statuses, a.status)
		return nil
	})
	for range 3 {
		statuses = append(statuses, snippetRequest(t, envoy, http.MethodGet, "limited.example", "/", nil).status)
	}
	if want := []int{200, 200, 200, 429}; !slices.Equal(statuses, want) {
		t.Errorf("four requests at once: %v, want %v", statuses, want)
	}
}

// startH2CEcho serves echo.Handler over HTTP/2 without TLS (prior
// knowledge, as Envoy speaks to a GRPC backend) and returns its port.
func startH2CEcho(t *testing.T, name string) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: echo.Handler(name), Protocols: &protocols, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// forwardedSnippetYAML sets X-Forwarded-For to
// $proxy_add_x_forwarded_for in a configuration-snippet.
const forwardedSnippetYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: forwarded
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
spec:
  rules: [{host: forwarded.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`

const snippetsYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: realip
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/server-snippet: |
      real_ip_header X-Client-Address;
      real_ip_recursive on;
spec:
  rules: [{host: realip.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
` + forwardedSnippetYAML + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: host
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_set_header Host $host;
      proxy_set_header X-Real-IP $remote_addr;
spec:
  rules: [{host: host.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: vhost
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/upstream-vhost: internal.example
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_set_header Host $http_host;
spec:
  rules: [{host: vhost.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: expires
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      expires 30d;
      add_header Cache-Control "public";
    nginx.ingress.kubernetes.io/server-snippet: |
      location = /old { expires epoch; return 200 "old"; }
      location = /forever { expires max; return 200 "forever"; }
      location = /stale { expires -1; return 200 "stale"; }
spec:
  rules: [{host: expires.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: inert
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      proxy_ssl_server_name on;
      proxy_ssl_name $host;
      grpc_set_header X-Tenant blue;
      error_page 403 = "https://login.example/oauth2/start?rd=$request_uri";
      etag on;
      proxy_pass_header ETag;
      proxy_set_header If-Match "";
      gzip off;
      grpc_next_upstream_tries 5;
spec:
  rules: [{host: inert.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: grpc
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/backend-protocol: GRPC
    nginx.ingress.kubernetes.io/configuration-snippet: |
      grpc_set_header X-Tenant blue;
      proxy_set_header X-Ignored yes;
spec:
  rules: [{host: grpc.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: h2c, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: headers
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-Frame-Options: DENY" "X-Served-For: $host";
      more_set_headers "X-Split   yes";
      more_clear_headers X-Powered-By;
      add_header X-Cache "HIT";
      add_header Strict-Transport-Security "max-age=63072000" always;
      proxy_set_header X-Client-Addr $remote_addr;
      proxy_set_header X-Original-Path $uri;
      proxy_set_header X-Auth-Source $http_x_upstream_auth;
      proxy_set_header ssl-client-cert $ssl_client_escaped_cert;
      proxy_set_header l5d-dst-override $service_name.$namespace.svc.cluster.local:$service_port;
      proxy_set_header X-Forwarded-Proto https;
      proxy_hide_header X-Backend-Secret;
      more_clear_input_headers X-Debug;
      more_set_input_headers "X-Tenant: blue" "X-Real-IP: 1.2.3.4";
spec:
  rules: [{host: headers.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rewrites
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      set $mobile 0;
      if ($http_user_agent ~* "(iPhone|Android)") {
        set $mobile 1;
      }
      if ($mobile = 1) {
        return 302 https://m.example$request_uri;
      }
      if ($request_method = DELETE) {
        return 405 "no deletes\n";
      }
      rewrite ^/old/(.*)$ /new/$1 permanent;
      rewrite ^/api/v1/(.*)$ /v1/$1 break;
spec:
  rules: [{host: rewrites.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: slashes
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      rewrite ^/old(/[a-z]+)$ $1/new redirect;
      rewrite ^(.*[^/])$ $1/ permanent;
spec:
  rules: [{host: slashes.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: access
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      allow 10.0.0.0/8;
      deny all;
spec:
  rules: [{host: access.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: open
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      deny all;
      return 200 "open";
spec:
  rules: [{host: open.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: conditions
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      if ($scheme = http) { set $plain 1; }
      if ($request_uri ~ ^/scheme) { set $want_scheme 1; }
      set $both "$plain$want_scheme";
      if ($both = 11) { return 421; }
      if ($request_uri ~ "debug=1") { return 422; }
      if ($uri ~ \.php$) { return 423; }
      if ($request_uri !~ ^/token) { set $skip 1; }
      if ($skip) { break; }
      if ($http_x_token = "") { return 424; }
      if ($http_x_token = 0) { return 424; }
spec:
  rules: [{host: conditions.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: host-condition
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      if ($host = conditions.example) { return 425; }
spec:
  rules: [{host: conditions.example, http: {paths: [{path: /host, pathType: Exact, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: nested
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-Outer: 1";
      location ~* \.(git|env)$ {
        deny all;
      }
spec:
  rules: [{host: nested.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: server
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/server-snippet: |
      more_set_headers "X-Server: snippet";
      if ($http_x_legacy = "1") {
        return 301 https://$host$request_uri;
      }
      location = /robots.txt {
        return 200 "User-agent: *\nDisallow: /\n";
      }
      location ~* \.(git|env)$ {
        deny all;
      }
      location /metrics {
        allow 192.168.0.0/16;
        deny all;
        return 404;
      }
spec:
  rules: [{host: server.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}, {path: /app, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`

// TestSnippetRewriteLast: ngx_http_rewrite_module's rewrite ... last
// "stops processing the current set of ngx_http_rewrite_module directives
// and starts a search for a new location matching the changed URI", the
// request's arguments kept: the new path reaches the backend of the
// Ingress path that takes it, with that location's configuration (here
// its more_set_input_headers), whichever Ingress made it; in the
// snippet's own location, its rewrite directives run again on the new
// path, which they leave as it is.
func TestSnippetRewriteLast(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(backends...))
	writeManifest(t, dir, "ingresses.yaml", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: front
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      rewrite ^/$ /targets last;
      rewrite ^/old$ /new last;
      more_set_input_headers "X-Location: front";
spec:
  rules: [{host: last.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: new
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_input_headers "X-Location: new";
spec:
  rules: [{host: last.example, http: {paths: [{path: /new, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}]}}]
`)
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "last.example served", func() error {
		return envoy.Expect("last.example", "/new", http.StatusOK, "beta")
	})
	for _, c := range []struct {
		path, backend, seenPath, query, location string
	}{
		{"/?q=1", "alpha", "/targets", "q=1", "front"},
		{"/old?x=2", "beta", "/new", "x=2", "new"},
		{"/other", "alpha", "/other", "", "front"},
		{"/new/a", "beta", "/new/a", "", "new"},
	} {
		a := snippetRequest(t, envoy, http.MethodGet, "last.example", c.path, nil)
		if a.seen == nil {
			t.Errorf("%s: %d %q, not a backend's", c.path, a.status, a.body)
			continue
		}
		if a.seen.Backend != c.backend || a.seen.Path != c.seenPath || a.seen.Query != c.query || a.seen.Header.Get("X-Location") != c.location {
			t.Errorf("%s: backend %s got %s?%s with X-Location %q; want %s, %s?%s, %q",
				c.path, a.seen.Backend, a.seen.Path, a.seen.Query, a.seen.Header.Get("X-Location"), c.backend, c.seenPath, c.query, c.location)
		}
	}
}

// TestSnippetServerErrorPage: a server-snippet's error_page is inherited
// by the host's locations (ngx_http_core_module: "if and only if there
// are no error_page directives defined on the current level"), and there
// takes nginx's own answers alone: without custom-http-errors
// proxy_intercept_errors is off, so the backend's 404 reaches the client
// as the backend sent it. Where a path of the host answers one of its
// codes itself (every proxying location answers 502), the error page is
// not translated and the Ingress's paths answer 503.
func TestSnippetServerErrorPage(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pages
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/server-snippet: |
      error_page 404 /custom_404.html;
spec:
  rules: [{host: pages.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: gateway-errors
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/server-snippet: |
      error_page 502 503 504 /50x.html;
spec:
  rules: [{host: gateway-errors.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
`)
	cp := framework.StartControlPlane(t, "--manifests", dir)
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "pages.example served", func() error {
		return envoy.Expect("pages.example", "/", http.StatusOK, "alpha")
	})
	a := snippetRequest(t, envoy, http.MethodGet, "pages.example", "/missing?status=404", nil)
	if a.status != http.StatusNotFound || a.seen == nil || a.seen.Backend != "alpha" {
		t.Errorf("the backend's 404: %d %q, want it as the backend sent it", a.status, a.body)
	}
	framework.Eventually(t, convergeTimeout, "gateway-errors.example refused", func() error {
		r := snippetRequest(t, envoy, http.MethodGet, "gateway-errors.example", "/", nil)
		if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "not served") {
			return fmt.Errorf("%d %q, want the refused Ingress's 503", r.status, r.body)
		}
		return nil
	})
}

// snippetClientVerifyHosts are TestSnippetsClientVerify's hosts, by the
// auth-tls-verify-client of each (none: no auth-tls).
var snippetClientVerifyHosts = []string{"none.verify.test", "on.verify.test", "optional.verify.test"}

// TestSnippetsClientVerify proves through a real Envoy, with real client
// certificates, the snippets' conditions on $ssl_client_verify, the
// corpus's (docs) "if ($ssl_client_verify != SUCCESS) { return 401; }".
// nginx's variable is empty over plain HTTP and, over TLS, "NONE" without
// a certificate, "SUCCESS" for one that verifies (ngx_http_ssl_variable in
// src/http/modules/ngx_http_ssl_module.c, ngx_ssl_get_client_verify in
// src/event/ngx_event_openssl.c); ingress-nginx's ssl_verify_client is the
// host's auth-tls-verify-client (nginx.tmpl), and with on nginx answers 400
// before any location to a request without a certificate that verifies
// (ngx_http_process_request in src/http/ngx_http_request.c). The snippet's
// return runs in the rewrite phase, before ingress-nginx's redirect to
// HTTPS (its Lua, later in the phase).
func TestSnippetsClientVerify(t *testing.T) {
	b := echoBackends(t, "alpha")
	serverCA, client, secrets := clientCertSecrets(t, "verify", snippetClientVerifyHosts, func(host string) string {
		return strings.Split(host, ".")[0] + "-verify-cert"
	})
	var ingresses strings.Builder
	for _, host := range snippetClientVerifyHosts {
		name := strings.Split(host, ".")[0]
		annotations := ""
		if name != "none" {
			annotations = fmt.Sprintf("    nginx.ingress.kubernetes.io/auth-tls-secret: default/client-ca\n    nginx.ingress.kubernetes.io/auth-tls-verify-client: %q\n", name)
		}
		fmt.Fprintf(&ingresses, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: verify-%s
  annotations:
%s    nginx.ingress.kubernetes.io/configuration-snippet: |
      if ($ssl_client_verify != SUCCESS) {
        return 401;
      }
      proxy_set_header Authorization "Bearer lab-token";
spec:
  tls: [{hosts: [%s], secretName: %s-verify-cert}]
  rules:
  - host: %s
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`, name, annotations, host, name, host)
	}
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"secrets.yaml", secrets},
		manifest{"ingresses.yaml", ingresses.String()})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	roots := serverCA.Pool()
	get := func(host string, withCert bool) mtlsResult {
		if withCert {
			return mtlsGet(envoy.HTTPSAddress, roots, host, &client, nil)
		}
		return mtlsGet(envoy.HTTPSAddress, roots, host, nil, nil)
	}
	framework.Eventually(t, convergeTimeout, "the hosts served over HTTPS", func() error {
		for _, host := range snippetClientVerifyHosts {
			if r := get(host, true); r.err != nil || r.Status == http.StatusNotFound {
				return fmt.Errorf("%s: %v %v", host, r.Response, r.err)
			}
		}
		return nil
	})

	// No auth-tls: nginx asks for no certificate, so the variable is NONE
	// over TLS (even for a client that would send one) and empty over
	// plain HTTP: never SUCCESS, every request is answered 401.
	t.Run("without auth-tls: 401 on every listener", func(t *testing.T) {
		for _, withCert := range []bool{false, true} {
			if r := get("none.verify.test", withCert); r.err != nil || r.Status != http.StatusUnauthorized || r.Backend != "" {
				t.Errorf("HTTPS, a certificate offered %v: got %v, %v; want 401 from the snippet", withCert, r.Response, r.err)
			}
		}
		if a := snippetRequest(t, envoy, http.MethodGet, "none.verify.test", "/", nil); a.status != http.StatusUnauthorized || a.seen != nil {
			t.Errorf("plain HTTP: %d, want 401 from the snippet", a.status)
		}
	})
	// auth-tls-verify-client on: a certificate that verifies reaches the
	// location with SUCCESS, and the request goes upstream with the
	// snippet's header; without one nginx answers 400 first; over plain
	// HTTP the variable is empty and the snippet answers 401.
	t.Run("on: SUCCESS over HTTPS, empty over plain HTTP", func(t *testing.T) {
		r := get("on.verify.test", true)
		if r.err != nil || r.Status != http.StatusOK || r.Backend != "alpha" {
			t.Fatalf("HTTPS with a certificate: got %v, %v; want 200 from alpha", r.Response, r.err)
		}
		if got := r.Echo.Header.Get("Authorization"); got != "Bearer lab-token" {
			t.Errorf("HTTPS with a certificate: Authorization %q upstream, want the snippet's", got)
		}
		if r := get("on.verify.test", false); r.err != nil || r.Status != http.StatusBadRequest {
			t.Errorf("HTTPS without a certificate: got %v, %v; want nginx's 400", r.Response, r.err)
		}
		if a := snippetRequest(t, envoy, http.MethodGet, "on.verify.test", "/", nil); a.status != http.StatusUnauthorized || a.seen != nil {
			t.Errorf("plain HTTP: %d, want 401 from the snippet, before the redirect to HTTPS", a.status)
		}
	})
	// optional: the value depends on the client's certificate, which is
	// not translated: the Ingress is refused, its path answers 503.
	t.Run("optional: refused", func(t *testing.T) {
		if r := get("optional.verify.test", true); r.err != nil || r.Status != http.StatusServiceUnavailable {
			t.Errorf("got %v, %v; want 503", r.Response, r.err)
		}
	})
}

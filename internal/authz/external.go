package authz

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"

	"github.com/ingress-xds/ingress-xds/internal/authz/authzapi"
)

// externalChecker is ingress-nginx's external authentication (auth-url),
// with nginx's auth_request semantics: the service makes the subrequest
// itself, to the fixed URL, without the body, and maps its status: 2xx
// allows (copying auth-response-headers to the upstream request), 401 and
// 403 are the client's answer (a 401 becomes the sign-in redirect when
// auth-signin is set), anything else, a failure to connect included, is
// 500. Envoy's own HTTP ext_authz service can do neither the fixed URL
// (it appends the request's path) nor the 500 (it passes a 5xx through).
type externalChecker struct {
	client *http.Client
	cache  *authCache
	now    func() time.Time
	log    *slog.Logger
}

// externalOptions configure the checker; the zero value is production's.
type externalOptions struct {
	// guard refuses addresses; nil: newAddressGuard's.
	guard *addressGuard
	// allowAnyAddress lets auth-url reach any address (tests on loopback).
	allowAnyAddress bool
	// cacheEntries bounds the auth-cache-key cache; 0: 10,000.
	cacheEntries int
	// timeout bounds one subrequest; 0: nginx's proxy_read_timeout, 60 s.
	timeout time.Duration
	now     func() time.Time
	log     *slog.Logger
}

func newExternalChecker(o externalOptions) *externalChecker {
	guard := o.guard
	if guard == nil && !o.allowAnyAddress {
		guard = newAddressGuard()
	}
	if o.cacheEntries == 0 {
		o.cacheEntries = 10_000
	}
	if o.timeout == 0 {
		o.timeout = 60 * time.Second
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	transport := &http.Transport{
		// Never a proxy from the environment: auth-url is the target.
		Proxy:       nil,
		DialContext: dialer(guard),
		// nginx does not verify an auth-url's certificate
		// (proxy_ssl_verify off is its default); neither do we, so that
		// what works behind ingress-nginx works here. It sends the name
		// (proxy_ssl_server_name on), as Go does.
		TLSClientConfig:       &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // nginx's behaviour, documented
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: o.timeout,
	}
	return &externalChecker{
		client: &http.Client{
			Transport: transport,
			Timeout:   o.timeout,
			// nginx's subrequest does not follow redirects: a 3xx is
			// an answer, and an error.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		cache: newAuthCache(o.cacheEntries),
		now:   o.now,
		log:   o.log,
	}
}

// externalConfig is one route's external authentication, from its
// context extensions.
type externalConfig struct {
	url, method, signin, signinParam, requestRedirect string
	methodSet, alwaysSetCookie                        bool
	responseHeaders                                   []string
	cacheKey, cacheScope                              string
	cacheRules                                        []cacheRule
	proxySetHeaders                                   [][2]string
	// upstreamHeaders are made from the answer's headers (snippets'
	// auth_request_set); answerHeaders are all the answer's headers
	// read: auth-response-headers' and theirs.
	upstreamHeaders []authzapi.UpstreamHeader
	answerHeaders   []string
}

func parseExternal(ext map[string]string) (*externalConfig, error) {
	c := &externalConfig{
		url:             ext[authzapi.ExternalURL],
		method:          ext[authzapi.ExternalMethod],
		signin:          ext[authzapi.ExternalSignin],
		signinParam:     ext[authzapi.ExternalSigninParam],
		requestRedirect: ext[authzapi.ExternalRequestRedirect],
		alwaysSetCookie: ext[authzapi.ExternalAlwaysSetCookie] == "true",
		cacheKey:        ext[authzapi.ExternalCacheKey],
		cacheScope:      ext[authzapi.ExternalCacheScope],
	}
	if c.url == "" {
		return nil, fmt.Errorf("no %s", authzapi.ExternalURL)
	}
	c.methodSet = c.method != ""
	if !c.methodSet {
		c.method = http.MethodGet
	}
	if c.signinParam == "" {
		c.signinParam = "rd"
	}
	for h := range strings.SplitSeq(ext[authzapi.ExternalResponseHeaders], ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.responseHeaders = append(c.responseHeaders, h)
		}
	}
	if c.cacheKey != "" {
		d := ext[authzapi.ExternalCacheDuration]
		if d == "" {
			d = authzapi.DefaultCacheDuration
		}
		rules, err := parseCacheDurations(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", authzapi.ExternalCacheDuration, err)
		}
		c.cacheRules = rules
	}
	for line := range strings.SplitSeq(ext[authzapi.ExternalProxySetHeaders], "\n") {
		if name, value, ok := strings.Cut(line, ": "); ok {
			c.proxySetHeaders = append(c.proxySetHeaders, [2]string{name, value})
		}
	}
	c.answerHeaders = slices.Clone(c.responseHeaders)
	if raw := ext[authzapi.ExternalUpstreamHeaders]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &c.upstreamHeaders); err != nil {
			return nil, fmt.Errorf("%s: %w", authzapi.ExternalUpstreamHeaders, err)
		}
		for _, h := range c.upstreamHeaders {
			for _, p := range h.Parts {
				if p[1] != "" && !slices.Contains(c.answerHeaders, p[1]) {
					c.answerHeaders = append(c.answerHeaders, p[1])
				}
			}
		}
	}
	return c, nil
}

// authAnswer is what the client's answer needs of the auth service's:
// kept in the cache as it is.
type authAnswer struct {
	status int
	// headers are the auth-response-headers' values, by the names the
	// annotation gives; a name absent was not returned.
	headers         map[string]string
	cookies         []string // Set-Cookie
	wwwAuthenticate []string
}

func (e *externalChecker) check(ctx context.Context, req *authv3.CheckRequest, ext map[string]string) (*authv3.CheckResponse, error) {
	cfg, err := parseExternal(ext)
	if err != nil {
		// The control plane wrote these: a bug, never the client's.
		return nil, fmt.Errorf("external auth: %w", err)
	}
	vars := varsOf(req)
	var key string
	if cfg.cacheKey != "" {
		// nginx keys by server and location: the host and the route's
		// path match (the scope the control plane wrote).
		sum := sha256.Sum256([]byte(vars.host() + "\x00" + cfg.cacheScope + "\x00" + cfg.url + "\x00" + vars.expand(cfg.cacheKey)))
		key = hex.EncodeToString(sum[:])
		if a := e.cache.get(key, e.now()); a != nil {
			return respond(cfg, vars, a), nil
		}
	}
	a, err := e.subrequest(ctx, cfg, vars)
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelWarn, "external auth subrequest failed", slog.String("error", err.Error()))
		return deny(http.StatusInternalServerError, nil), nil
	}
	if key != "" {
		if ttl := ttlFor(cfg.cacheRules, a.status); ttl > 0 {
			now := e.now()
			e.cache.put(key, a, now.Add(ttl), now)
		}
	}
	return respond(cfg, vars, a), nil
}

func varsOf(req *authv3.CheckRequest) *requestVars {
	h := req.GetAttributes().GetRequest().GetHttp()
	v := &requestVars{
		method:     h.GetMethod(),
		scheme:     h.GetScheme(),
		authority:  h.GetHost(),
		requestURI: h.GetPath(),
		remoteAddr: req.GetAttributes().GetSource().GetAddress().GetSocketAddress().GetAddress(),
		requestID:  h.GetId(),
		headers:    h.GetHeaders(),
	}
	if v.scheme == "" {
		v.scheme = "http"
	}
	return v
}

// notPassed are the client's headers the subrequest does not carry: the
// body's (there is none), hop-by-hop ones, and those nginx's auth location
// clears or sets itself.
var notPassed = map[string]bool{
	"content-length": true, "transfer-encoding": true, "connection": true, "keep-alive": true,
	"proxy-connection": true, "upgrade": true, "te": true, "trailer": true, "expect": true,
	"host": true, "x-forwarded-proto": true,
}

// subrequest asks the auth service, as nginx's auth location does
// (ingress-nginx's nginx.tmpl): the client's headers without its body,
// Host the auth-url's host, and X-Original-URL, X-Original-Method,
// X-Sent-From, X-Real-IP, X-Forwarded-For, X-Auth-Request-Redirect,
// X-Request-ID; with auth-method also X-Original-URI and X-Scheme; then
// auth-proxy-set-headers.
func (e *externalChecker) subrequest(ctx context.Context, cfg *externalConfig, v *requestVars) (*authAnswer, error) {
	target := v.expand(cfg.url)
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("auth-url %q expands to a URL that is not http(s)://host/...", target)
	}
	r, err := http.NewRequestWithContext(ctx, cfg.method, u.String(), http.NoBody)
	if err != nil {
		return nil, fmt.Errorf("auth-url %q: %w", target, err)
	}
	for name, value := range v.headers {
		if strings.HasPrefix(name, ":") || notPassed[name] {
			continue
		}
		r.Header[http.CanonicalHeaderKey(name)] = []string{value}
	}
	r.Host = u.Hostname()
	set := func(name, value string) { r.Header[name] = []string{value} }
	set("X-Original-Url", v.scheme+"://"+v.authority+v.requestURI)
	set("X-Original-Method", v.method)
	set("X-Sent-From", "nginx-ingress-controller")
	set("X-Real-Ip", v.remoteAddr)
	set("X-Forwarded-For", v.remoteAddr)
	if cfg.requestRedirect != "" {
		set("X-Auth-Request-Redirect", v.expand(cfg.requestRedirect))
	} else {
		set("X-Auth-Request-Redirect", v.requestURI)
	}
	if v.requestID != "" {
		set("X-Request-Id", v.requestID)
	}
	if cfg.methodSet {
		set("X-Original-Uri", v.requestURI)
		set("X-Scheme", v.scheme)
	}
	for _, h := range cfg.proxySetHeaders {
		if value := v.expand(h[1]); value != "" {
			set(http.CanonicalHeaderKey(h[0]), value)
		} else {
			delete(r.Header, http.CanonicalHeaderKey(h[0])) // nginx drops a header set empty
		}
	}
	resp, err := e.client.Do(r)
	if err != nil {
		return nil, fmt.Errorf("auth-url %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	// Read a little of the body so that the connection can be kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	a := &authAnswer{
		status:          resp.StatusCode,
		cookies:         resp.Header.Values("Set-Cookie"),
		wwwAuthenticate: resp.Header.Values("Www-Authenticate"),
	}
	for _, name := range cfg.answerHeaders {
		if values := resp.Header.Values(name); len(values) > 0 {
			if a.headers == nil {
				a.headers = map[string]string{}
			}
			a.headers[name] = strings.Join(values, ", ")
		}
	}
	return a, nil
}

// respond maps the auth service's answer to the client's, as
// auth_request and ingress-nginx's template do.
func respond(cfg *externalConfig, v *requestVars, a *authAnswer) *authv3.CheckResponse {
	switch {
	case a.status >= 200 && a.status < 300:
		return allow(cfg, a)
	case a.status == http.StatusUnauthorized && cfg.signin != "":
		// error_page 401 = the sign-in location, whose add_header
		// Set-Cookie applies to its 302.
		headers := []*corev3.HeaderValueOption{setHeader("Location", signinURL(v.expand(cfg.signin), cfg.signinParam, v))}
		return deny(http.StatusFound, append(headers, cookieHeaders(a.cookies)...))
	}
	status := a.status
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		status = http.StatusInternalServerError
	}
	var headers []*corev3.HeaderValueOption
	if status == http.StatusUnauthorized {
		for _, w := range a.wwwAuthenticate {
			headers = append(headers, appendHeader("WWW-Authenticate", w))
		}
	}
	if cfg.alwaysSetCookie {
		// add_header Set-Cookie ... always: on the error answer too.
		headers = append(headers, cookieHeaders(a.cookies)...)
	}
	return deny(status, headers)
}

// allow lets the request through with auth-response-headers set from the
// auth service's answer, and removed where it gave none, so that a
// client's own value never reaches the backend.
func allow(cfg *externalConfig, a *authAnswer) *authv3.CheckResponse {
	ok := &authv3.OkHttpResponse{}
	if cfg.alwaysSetCookie {
		ok.ResponseHeadersToAdd = cookieHeaders(a.cookies)
	} else {
		// Only on the backend's success answers, as nginx's add_header:
		// the renderer's auth cookie filter decides by the status.
		for _, c := range a.cookies {
			ok.ResponseHeadersToAdd = append(ok.ResponseHeadersToAdd, appendHeader(authzapi.ExternalCookieHeader, c))
		}
	}
	for _, name := range cfg.responseHeaders {
		if value, got := a.headers[name]; got && value != "" {
			ok.Headers = append(ok.Headers, setHeader(name, value))
		} else {
			ok.HeadersToRemove = append(ok.HeadersToRemove, strings.ToLower(name))
		}
	}
	// nginx's proxy_set_header of auth_request_set variables: the value
	// made now, sent when it is not empty, the client's never.
	for _, h := range cfg.upstreamHeaders {
		var b strings.Builder
		for _, p := range h.Parts {
			if p[1] != "" {
				b.WriteString(a.headers[p[1]])
			} else {
				b.WriteString(p[0])
			}
		}
		if b.Len() > 0 {
			ok.Headers = append(ok.Headers, setHeader(h.Name, b.String()))
		} else {
			ok.HeadersToRemove = append(ok.HeadersToRemove, strings.ToLower(h.Name))
		}
	}
	return &authv3.CheckResponse{
		Status:       &rpcstatus.Status{Code: int32(codes.OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: ok},
	}
}

// signinURL is ingress-nginx's buildAuthSignURL: the sign-in URL with the
// original URL, escaped, in the redirect parameter, unless the URL already
// has that parameter.
func signinURL(signin, param string, v *requestVars) string {
	original := v.scheme + "://" + v.authority + escapeURI(v.requestURI)
	u, err := url.Parse(signin)
	if err != nil {
		return signin
	}
	q := u.Query()
	switch {
	case len(q) == 0:
		return signin + "?" + param + "=" + original
	case q.Get(param) != "":
		return signin
	}
	return signin + "&" + param + "=" + original
}

func setHeader(name, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: name, Value: value},
		AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
	}
}

func appendHeader(name, value string) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{
		Header:       &corev3.HeaderValue{Key: name, Value: value},
		AppendAction: corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD,
	}
}

func cookieHeaders(cookies []string) []*corev3.HeaderValueOption {
	var out []*corev3.HeaderValueOption
	for _, c := range cookies {
		out = append(out, appendHeader("Set-Cookie", c))
	}
	return out
}

// deny answers the client with status and nginx's error page for it.
func deny(status int, headers []*corev3.HeaderValueOption) *authv3.CheckResponse {
	body := ""
	if status != http.StatusFound {
		title := fmt.Sprintf("%d %s", status, nginxReason(status))
		body = "<html>\r\n<head><title>" + title + "</title></head>\r\n<body>\r\n<center><h1>" + title + "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
		headers = append(headers, setHeader("Content-Type", "text/html"))
	}
	return &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(codes.PermissionDenied)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(status)},
			Headers: headers,
			Body:    body,
		}},
	}
}

// nginxReason is the reason phrase of nginx's error pages, where it
// differs from Go's.
func nginxReason(status int) string {
	if status == http.StatusUnauthorized {
		return "Authorization Required"
	}
	return http.StatusText(status)
}

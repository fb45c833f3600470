package annotations

// ingress-nginx's external authentication (its ExternalAuth and
// EnableGlobalAuth groups): nginx's auth_request to auth-url before each
// request. Envoy asks the authorisation service beside it (ingress-xds
// authz, internal/authz), which makes the subrequest itself and maps the
// answer as nginx does. A value of these keys that cannot be used refuses
// the Ingress (its paths answer 503, as ingress-nginx denies the
// location), never drops the check.

// AuthURL is the auth service asked before each request.
var AuthURL = key[string](&definition{
	name:  "auth-url",
	under: Nginx,
	scope: ScopeRoute,
	doc: `The URL asked before each request of the Ingress ("http://auth.ns.svc.cluster.local/verify"), without the request's body: ` +
		`a 2xx lets the request in, 401 and 403 are the client's answer, anything else (a connection failure too) is 500, as nginx's ` +
		`auth_request. The subrequest carries the client's headers and X-Original-URL, X-Original-Method, X-Sent-From, X-Real-IP, ` +
		`X-Forwarded-For, X-Auth-Request-Redirect and X-Request-ID, with Host the URL's host, as ingress-nginx's auth location. ` +
		`The authorisation service beside Envoy makes it.`,
	verdict: HonouredWithDifference,
	note: `Refused values (the Ingress is not served): userinfo, a scheme other than http and https, control characters, a host ` +
		`that is a loopback, link-local, unspecified or multicast address or localhost, a variable in the host other than $host, ` +
		`and variables the service does not expand (it expands $host, $http_host, $best_http_host, $scheme, $request_uri, ` +
		`$escaped_request_uri, $uri, $args, $query_string, $request_method, $remote_addr, $remote_user, $request_id, $http_*, $arg_*, ` +
		`$cookie_*). $host in the host needs rules with an exact host (else the client would choose the target). The service also ` +
		`refuses to connect to those addresses, and to its host's own, after DNS (a name that resolves to loopback gets 500), where ` +
		`nginx connects anywhere. As nginx, an https auth-url's certificate is not verified, and redirects are not followed.`,
}, parseAuthURL)

// AuthMethod is the subrequest's method.
var AuthMethod = key[string](&definition{
	name:  "auth-method",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The subrequest's method (GET when unset). As in ingress-nginx, setting it also adds X-Original-URI and X-Scheme to the subrequest.`,
}, parseOneOf("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE"))

// AuthSignin is where a client the auth service answers 401 is sent.
var AuthSignin = key[string](&definition{
	name:  "auth-signin",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Where a request the auth service answers 401 is redirected (302), with the original URL, escaped, in the rd parameter ` +
		`("https://$host/oauth2/start" gives Location https://<host>/oauth2/start?rd=http://<host>%2Fpath%3Fq): nginx variables are expanded ` +
		`per request. A URL that already has the parameter is sent as it is. The auth service's cookies go with the redirect.`,
}, parseSigninURL)

// AuthSigninRedirectParam names auth-signin's parameter.
var AuthSigninRedirectParam = key[string](&definition{
	name:  "auth-signin-redirect-param",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The name of auth-signin's parameter that carries the original URL ("rd" when unset).`,
}, parseQueryParam)

// AuthResponseHeaders are copied from the auth service's answer to the
// request sent upstream.
var AuthResponseHeaders = key[[]string](&definition{
	name:  "auth-response-headers",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Headers ("X-User, X-Email") copied from the auth service's 2xx answer onto the request sent to the backend; one the ` +
		`answer lacks is removed, so a client's own value of them never reaches the backend.`,
	verdict: HonouredWithDifference,
	note:    `A header the answer repeats is joined with ", ". Host, Connection, Content-Length, Transfer-Encoding and the other hop-by-hop headers are refused: Envoy sets them.`,
}, parseHeaderNames)

// AuthRequestRedirect is the subrequest's X-Auth-Request-Redirect.
var AuthRequestRedirect = key[string](&definition{
	name:  "auth-request-redirect",
	under: Nginx,
	scope: ScopeRoute,
	doc:   `The X-Auth-Request-Redirect header of the subrequest (the request URI when unset), nginx variables expanded.`,
}, parseNginxText)

// AuthAlwaysSetCookie passes the auth service's cookies on error answers.
var AuthAlwaysSetCookie = key[bool](&definition{
	name:  "auth-always-set-cookie",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": the auth service's Set-Cookie headers reach the client on every answer, the backend's errors and the auth ` +
		`service's own 401 and 403 included. "false" (the default): only on the backend's answers of status 200, 201, 204, 206, ` +
		`301, 302, 303, 304, 307 or 308 (nginx's add_header), and with the sign-in redirect.`,
}, parseBool)

// AuthCacheKey turns on the cache of the auth service's answers.
var AuthCacheKey = key[string](&definition{
	name:  "auth-cache-key",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Caches the auth service's answers under this key ("$remote_user$http_authorization"), kept apart per host and path, ` +
		`for the times of auth-cache-duration: a cached answer is used without asking the service again.`,
	verdict: HonouredWithDifference,
	note: `The cache is the authorisation service's, one per Envoy (as nginx's is per replica), bounded in entries (10,000: when full, ` +
		`expired entries go first, then any); the key's variables are those auth-url lists.`,
}, parseNginxText)

// AuthCacheDuration says how long each status is cached.
var AuthCacheDuration = key[string](&definition{
	name:  "auth-cache-duration",
	under: Nginx,
	scope: ScopeRoute,
	doc: `How long answers are cached, by status, as nginx's proxy_cache_valid: comma-separated groups of codes then a time ` +
		`("200 202 401 5m", the default; "any 1m"; a time alone is 200, 301 and 302). A connection failure is never cached.`,
}, parseCacheDuration)

// AuthProxySetHeaders names a ConfigMap of headers added to the
// subrequest.
var AuthProxySetHeaders = key[string](&definition{
	name:   "auth-proxy-set-headers",
	under:  Nginx,
	scope:  ScopeRoute,
	refers: KindConfigMap,
	doc: `A ConfigMap "namespace/name" of the Ingress's namespace whose keys are header names and values their values (nginx ` +
		`variables expanded), set on the subrequest.`,
	verdict: HonouredWithDifference,
	note: `The value must be "namespace/name" (ingress-nginx also takes a bare name). A ConfigMap that is missing, of another ` +
		`namespace, or with a header name or value that cannot be sent, refuses the Ingress.`,
}, parseNamespacedName)

// The keepalive keys are known and ignored.
var (
	AuthKeepalive          = ignoredKeepalive("auth-keepalive", parseInt)
	AuthKeepaliveRequests  = ignoredKeepalive("auth-keepalive-requests", parseInt)
	AuthKeepaliveTimeout   = ignoredKeepalive("auth-keepalive-timeout", parseInt)
	AuthKeepaliveShareVars = key[bool](&definition{
		name:    "auth-keepalive-share-vars",
		under:   Nginx,
		scope:   ScopeRoute,
		doc:     `Whether nginx's Lua keepalive subrequest shares nginx variables with the request.`,
		verdict: Ignored,
		note:    `There are no nginx variables to share: the authorisation service reads what it needs from each request.`,
	}, parseBool)
)

func ignoredKeepalive(name string, parse func(string) (int, error)) Key[int] {
	return key(&definition{
		name:    name,
		under:   Nginx,
		scope:   ScopeRoute,
		doc:     `Tunes the keepalive connections of nginx's Lua subrequest to auth-url.`,
		verdict: Ignored,
		note: `The authorisation service always keeps connections to each auth service open and reuses them (up to 64 idle per ` +
			`host, closed after 60 s idle); nginx's per-location tuning has nothing to tune.`,
	}, parse)
}

// EnableGlobalAuth opts a location out of the ConfigMap's global auth.
var EnableGlobalAuth = key[bool](&definition{
	name:  "enable-global-auth",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"false" exempts the Ingress from the global external authentication of ingress-nginx's ConfigMap (global-auth-url, ` +
		`docs/configmap.md); an Ingress's own auth-url replaces the global one either way, as in ingress-nginx.`,
}, parseBool)

func externalAuthKeys() []*definition {
	return []*definition{
		AuthURL.def, AuthMethod.def, AuthSignin.def, AuthSigninRedirectParam.def, AuthResponseHeaders.def,
		AuthRequestRedirect.def, AuthAlwaysSetCookie.def, AuthCacheKey.def, AuthCacheDuration.def, AuthProxySetHeaders.def,
		AuthKeepalive.def, AuthKeepaliveRequests.def, AuthKeepaliveTimeout.def, AuthKeepaliveShareVars.def, EnableGlobalAuth.def,
	}
}

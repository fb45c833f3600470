package annotations

// ingress-nginx's redirect keys (its Redirect group, and the redirects of
// its Rewrite group), with the behaviour its e2e tests check: the status,
// and the Location exactly as ingress-nginx writes it.

// PermanentRedirect answers every path of the Ingress with a redirect to
// one URL.
var PermanentRedirect = key[string](&definition{
	name:  "permanent-redirect",
	under: Nginx,
	scope: ScopeRoute,
	doc: `A URL ("https://example.com/new"): every path of the Ingress answers with a redirect (permanent-redirect-code, 301 by default) ` +
		`whose Location is that URL exactly, the request's path and query not appended; the backend is not reached. ` +
		`An absolute path ("/new") is made absolute with the request's scheme and host, unless relative-redirects is "true".`,
	verdict: HonouredWithDifference,
	note: `Validated as ingress-nginx validates it (only letters, digits and -._~/:,?&=, so no userinfo, no CR or LF), and also refused ` +
		`unless it is an http or https URL with a host, or an absolute path (ingress-nginx would write anything else into the Location as it is).`,
}, parseRedirectURL(true))

// PermanentRedirectCode is permanent-redirect's status.
var PermanentRedirectCode = key[uint32](&definition{
	name:    "permanent-redirect-code",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The status of permanent-redirect: 301, 302, 303, 307 or 308 (301 when not set or not one of those).`,
	verdict: HonouredWithDifference,
	note: `ingress-nginx also takes 300, 304, 305 and 306, with which nginx sends the URL as the body and no Location: ` +
		`those are reported, and 301 is used.`,
}, parseRedirectCode(301, 302, 303, 307, 308))

// TemporalRedirect is permanent-redirect with 302, and takes precedence
// over it.
var TemporalRedirect = key[string](&definition{
	name:  "temporal-redirect",
	under: Nginx,
	scope: ScopeRoute,
	doc: `An http or https URL: as permanent-redirect, with temporal-redirect-code (302 by default); ` +
		`it takes precedence over permanent-redirect, as in ingress-nginx.`,
	verdict: HonouredWithDifference,
	note:    `Validated as permanent-redirect; ingress-nginx also requires its scheme to be http or https, and so does ingress-xds.`,
}, parseRedirectURL(false))

// TemporalRedirectCode is temporal-redirect's status.
var TemporalRedirectCode = key[uint32](&definition{
	name:    "temporal-redirect-code",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `The status of temporal-redirect: 301, 302, 303 or 307 (302 when not set or not one of those; ingress-nginx does not take 308 here).`,
	verdict: HonouredWithDifference,
	note:    `ingress-nginx also takes 300, 304, 305 and 306 (nginx then sends no Location): those are reported, and 302 is used.`,
}, parseRedirectCode(301, 302, 303, 307))

// RelativeRedirects sends an absolute-path permanent-redirect as it is.
var RelativeRedirects = key[bool](&definition{
	name:  "relative-redirects",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": a permanent-redirect or temporal-redirect that is an absolute path ("/new") is sent as it is in the Location ` +
		`(nginx's absolute_redirect off), and so is a configuration-snippet's return or rewrite to a path (not a server-snippet's, ` +
		`which lands outside the Ingress's locations); otherwise it is made absolute with the request's scheme and host.`,
	note: `nginx's other own redirects (a directory's trailing slash) have no counterpart in ingress-xds, so this is all it changes.`,
}, parseBool)

// SSLRedirect sends plain HTTP to HTTPS for hosts with a certificate.
var SSLRedirect = key[bool](&definition{
	name:  "ssl-redirect",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": for a host with a certificate (and an HTTPS listener), plain-HTTP requests get a 308 to the same URL over HTTPS, without a trailing "/" ` +
		`(see preserve-trailing-slash); "false" turns it off (force-ssl-redirect still applies).`,
	verdict: HonouredWithDifference,
	note: `ingress-nginx has it on by default (its ConfigMap's ssl-redirect); ingress-xds too with serve --nginx-defaults, which is on ` +
		`when serve takes over ingress-nginx's class (--controller-class k8s.io/ingress-nginx); otherwise only when the annotation, or the ` +
		`controller ConfigMap's ssl-redirect (serve --configmap), says "true". Ingress paths starting with /.well-known/acme-challenge are ` +
		`exempted (the ConfigMap's no-tls-redirect-locations) with serve --configmap or --nginx-defaults only.`,
}, parseBool)

// ForceSSLRedirect answers plain-HTTP requests with a redirect to HTTPS,
// whether or not the host has a certificate.
var ForceSSLRedirect = key[bool](&definition{
	name:  "force-ssl-redirect",
	under: Own | Nginx | Legacy,
	scope: ScopeRoute,
	doc: `"true": plain-HTTP requests get a 308 to the same URL over HTTPS, with or without a certificate for the host, ` +
		`without a trailing "/" (see preserve-trailing-slash). The same under every prefix. Behind a proxy that terminates TLS, with the ` +
		`ConfigMap's use-forwarded-headers (or serve --trusted-forwarded-hops), a request is redirected only when its X-Forwarded-Proto ` +
		`says http, as ingress-nginx's lua_ingress.lua decides (ssl-redirect too).`,
}, parseBool)

// PreserveTrailingSlash keeps the trailing slash in redirects to HTTPS.
var PreserveTrailingSlash = key[bool](&definition{
	name:  "preserve-trailing-slash",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"true": the redirects of ssl-redirect and force-ssl-redirect keep the request's path as it is; otherwise one trailing "/" ` +
		`is dropped ("/" becomes no path at all: https://example.com), as ingress-nginx's Lua does.`,
	verdict: HonouredWithDifference,
	note: `ingress-nginx drops the last character of the path and query when it is "/": with a query, ingress-xds drops nothing ` +
		`(/a/?q=/ keeps its query whole; ingress-nginx would send /a/?q=).`,
}, parseBool)

// UsePortInRedirects writes the HTTPS listener's port into redirects to
// HTTPS.
var UsePortInRedirects = key[bool](&definition{
	name:    "use-port-in-redirects",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     `"true": the redirects of ssl-redirect and force-ssl-redirect name the HTTPS listener's port (https://example.com:443/a).`,
	verdict: HonouredWithDifference,
	note: `As ingress-nginx's Lua does, the port is that of the listener (--https-port), not one a load balancer in front may map to it. ` +
		`nginx's port_in_redirect also adds the port to an absolute-path permanent-redirect made absolute; ingress-xds does not.`,
}, parseBool)

// FromToWWWRedirect redirects www.<host> to <host>, or the reverse.
var FromToWWWRedirect = key[bool](&definition{
	name:  "from-to-www-redirect",
	under: Nginx,
	scope: ScopeHost,
	doc: `"true": requests for www.<host> get a 308 to <host> (to www.<host> when the rule's host is the www one), ` +
		`with the scheme and the port of the listener that took them and the path and query kept, one trailing "/" dropped ` +
		`(http://example.com:80/foo). Over HTTPS when spec.tls covers the www name. Skipped, and reported, when an Ingress routes the www name itself.`,
	verdict: HonouredWithDifference,
	note: `ingress-nginx serves the redirect over HTTPS when the apex host's certificate covers the other name; ingress-xds when a spec.tls ` +
		`entry names it (as it chooses every host's certificate). Wildcard hosts get no redirect.`,
}, parseBool)

// AppRoot redirects requests for / to the application's root.
var AppRoot = key[string](&definition{
	name:  "app-root",
	under: Nginx,
	scope: ScopeHost,
	doc: `A path ("/app"): a request for exactly / on any host of the Ingress gets a 302 to it, on the same scheme and host, ` +
		`the query dropped, before any other redirect or route; other paths are served as usual. An absolute URL is refused, as ingress-nginx refuses it.`,
	verdict: HonouredWithDifference,
	note: `As in ingress-nginx, it answers / of the host before any path of any Ingress (regular expressions included). Two Ingresses ` +
		`of a host asking for different roots: the oldest's is used and the other is reported (ingress-nginx takes whichever its configuration has first). ` +
		`The Location's host has no port: Envoy drops the Host header's port before routing, where nginx's $http_host keeps it.`,
}, parseAppRoot)

// redirectKeys lists the keys of this file, in the order
// docs/annotations.md shows them.
func redirectKeys() []*definition {
	return []*definition{
		PermanentRedirect.def, PermanentRedirectCode.def, TemporalRedirect.def, TemporalRedirectCode.def, RelativeRedirects.def,
		SSLRedirect.def, ForceSSLRedirect.def, PreserveTrailingSlash.def, UsePortInRedirects.def, FromToWWWRedirect.def, AppRoot.def,
	}
}

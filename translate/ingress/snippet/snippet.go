// Package snippet translates the nginx configuration of ingress-nginx's
// snippets (the configuration-snippet and server-snippet annotations, the
// ConfigMap's location-snippet and server-snippet) into typed policies of
// the IR, with nginx's semantics where they land in ingress-nginx's
// nginx.conf, or refuses the snippet whole, naming the first directive it
// cannot translate and its line.
//
// Nothing of a snippet's text reaches Envoy: each directive is read into
// typed values (header names checked as tokens, values parsed into text
// and known variables, regular expressions compiled as RE2), and what is
// not understood whole refuses the snippet. A snippet is applied whole or
// not at all.
//
// The rewrite-phase directives (set, if, return, rewrite, break) are
// executed symbolically: every way through them, by which if conditions
// hold, ends in an outcome (forward, answer, redirect, forward with a
// rewritten path), and each way that does not simply forward becomes a
// Branch, matched by the conditions it took (request headers and
// pseudo-headers, negated where a condition did not hold). Variables that
// set gives are followed as values: literal, or one request property.
//
// The header directives (more_set_headers, add_header, proxy_set_header,
// ...) are configuration, not instructions, in nginx: they become Edits,
// of the block (location or server) or of an if block, which nginx
// switches to when its condition holds ("if is evil": only the last true
// if's configuration counts).
package snippet

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// Context is where a snippet lands in ingress-nginx's nginx.conf.
type Context int

const (
	// LocationContext: the configuration-snippet annotation and the
	// ConfigMap's location-snippet, in each location the Ingress's paths
	// make, after the template's own directives.
	LocationContext Context = iota
	// ServerContext: the server-snippet annotation and the ConfigMap's
	// server-snippet, in the server of each host, before (annotation) or
	// after (ConfigMap) the locations.
	ServerContext
)

// Options are what the location a configuration-snippet lands in is,
// where a directive's effect depends on it: which backend protocol the
// location proxies with (nginx.tmpl writes proxy_pass or grpc_pass, to
// http://, https://, grpc:// or grpcs://) and which proxy_ssl_* the
// template itself writes there. The zero value is a location proxying
// plain HTTP without proxy-ssl-secret.
type Options struct {
	// Backend is the backend-protocol annotation's value: "" (HTTP),
	// HTTP, HTTPS, AUTO_HTTP, GRPC, GRPCS, H2C or FCGI.
	Backend string
	// ProxySSLSecret: the proxy-ssl-secret annotation is set, so the
	// template writes proxy_ssl_verify and its siblings in the location.
	ProxySSLSecret bool
	// Vars are the variables the template sets in the location before
	// the snippet (nginx.tmpl: set $namespace, $ingress_name,
	// $service_name, $service_port) and $server_name, by name, where they
	// hold one value in every location the snippet lands in.
	Vars map[string]string
	// Zones are the limit_req zones the ConfigMap's http-snippet
	// declares, by name.
	Zones map[string]Zone
	// CacheZones are the cache zones the ConfigMap's http-snippet
	// declares (proxy_cache_path), by name.
	CacheZones map[string]bool
	// ClientHeader is the ConfigMap's forwarded-for-header where the
	// listeners read the client's address from it rather than from
	// X-Forwarded-For; empty: X-Forwarded-For. The client's own
	// X-Forwarded-For then no longer reaches a location whole.
	ClientHeader string
	// DefaultType is the Content-Type of a return's text (nginx's
	// default_type: the ConfigMap's default-type); empty:
	// ingress-nginx's text/html.
	DefaultType string
	// RelativeRedirects is nginx's absolute_redirect off where the
	// snippet lands (the ConfigMap's relative-redirects, or in an
	// Ingress's locations its relative-redirects annotation): a redirect
	// to a path keeps it as it is, without the scheme and host.
	RelativeRedirects bool
}

// grpc says whether the location proxies with grpc_pass.
func (o Options) grpc() bool { return o.Backend == "GRPC" || o.Backend == "GRPCS" }

// tls says whether the location may proxy over TLS (AUTO_HTTP does for
// the requests that came over TLS).
func (o Options) tls() bool {
	return o.Backend == "HTTPS" || o.Backend == "GRPCS" || o.Backend == "AUTO_HTTP"
}

// Result is what a snippet amounts to.
type Result struct {
	// Edits are the header changes of every request the block serves
	// (for a server snippet: of every path of the host).
	Edits Edits
	// Access are allow and deny, in nginx's order; nil: none.
	Access *ir.IPRules
	// NoAccessLog: access_log off, the block's requests not logged.
	NoAccessLog bool
	// Gzip are the block's gzip directives (gzip.go), which the
	// front-end resolves with the outer levels'.
	Gzip Gzip `json:",omitzero"`
	// Satisfy is a configuration-snippet's satisfy: "any" or "all";
	// empty: none.
	Satisfy string
	// RequestRates are limit_req's: each client's requests to the
	// location, every rate applying, as the limit-rps and limit-rpm
	// annotations' do (nodelay: a request past the bucket is refused).
	RequestRates []ir.RequestRate `json:",omitempty"`
	// LimitReq is the first limit_req, which the front-end names where
	// it refuses the rates.
	LimitReq *DirectiveRef `json:",omitempty"`
	// LimitReqStatus and LimitConnStatus are the statuses of requests
	// the rate and connection limits refuse (limit_req_status,
	// limit_conn_status); 0: unchanged.
	LimitReqStatus, LimitConnStatus uint32
	// CookieFlags are a configuration-snippet's proxy_cookie_flags rules
	// with their flags, in order: the backend's Set-Cookie lines each
	// get the first matching rule's (cookie.go).
	CookieFlags []ir.CookieFlagsRule `json:",omitempty"`
	// CookieFlagsAt is the block's first proxy_cookie_flags, off
	// included: the block has a list of its own, which the outer
	// level's does not reach.
	CookieFlagsAt *DirectiveRef `json:",omitempty"`
	// Body is a configuration-snippet's sub_filter: text replaced in the
	// bodies of the location's responses (subfilter.go); nil: none.
	Body *ir.BodySubstitution `json:",omitempty"`
	// SubFilterAt is the block's first sub_filter, which the front-end
	// names where it refuses the substitution.
	SubFilterAt *DirectiveRef `json:",omitempty"`
	// Branches are the rewrite phase's outcomes that do not simply
	// forward the request, each with the conditions that lead to it; a
	// request that matches none is forwarded with Edits.
	Branches []Branch
	// Locations are a server snippet's location blocks.
	Locations []Location
	// ErrorPages are error_page's status codes (a configuration-snippet's,
	// or a server-snippet's, which every location of the host inherits),
	// of no effect while the location answers none of them itself (the
	// backend's answers pass through: proxy_intercept_errors is off
	// without custom-http-errors); the front-end, which knows what else
	// the location answers, refuses the snippet where it answers one.
	ErrorPages []ErrorPage `json:",omitempty"`
	// UnlessExternalAuth are directives of no effect without auth-url
	// (they read the auth service's answer, empty without it) and not
	// translated with it: the front-end refuses the snippet then.
	UnlessExternalAuth []DirectiveRef `json:",omitempty"`
	// UnlessRealIP are directives of no effect while nginx's realip
	// module is off (real_ip_header, real_ip_recursive: without
	// set_real_ip_from, which the template writes only when the
	// listeners read the client's address from a header) and not
	// translated while it is on: the front-end refuses the snippet then.
	UnlessRealIP []DirectiveRef `json:",omitempty"`
	// Contextual says whether Options decided some directive's fate, so
	// that a translation under other Options may differ.
	Contextual bool `json:",omitempty"`
	// Verdicts say, for each directive, what became of it.
	Verdicts []Verdict
}

// ErrorPage is one error_page directive: the statuses it takes.
type ErrorPage struct {
	DirectiveRef
	Codes []int
}

// Reselect is where a rewrite ... last sends the request: Path, a literal
// path (the query kept), which nginx looks up among the server's
// locations again.
type Reselect struct {
	DirectiveRef
	Path string
}

// DirectiveRef names a directive of the snippet.
type DirectiveRef struct {
	Directive string
	Line      int
}

// Edits are header changes.
type Edits struct {
	// Request changes what the upstream receives.
	Request ir.HeaderChanges
	// Response changes what the client receives: Remove
	// (more_clear_headers, proxy_hide_header), Set (more_set_headers),
	// Add (add_header always), AddOnSuccess (add_header), Expires
	// (expires).
	Response ir.HeaderChanges
	// AuthHeaders are request headers made from auth-url's answer
	// (auth_request_set variables in a proxy_set_header): without
	// auth-url, nginx's variables are empty.
	AuthHeaders []ir.AuthHeader
	// setsAddHeader says whether the block has an add_header of its own,
	// which stops nginx inheriting the outer block's.
	setsAddHeader bool
}

// Empty says whether the edits change nothing.
func (e *Edits) Empty() bool {
	return e == nil || headerChangesEmpty(&e.Request) && headerChangesEmpty(&e.Response) && len(e.AuthHeaders) == 0
}

func headerChangesEmpty(h *ir.HeaderChanges) bool {
	return len(h.Remove) == 0 && len(h.Set) == 0 && len(h.Add) == 0 && len(h.AddOnSuccess) == 0 && h.Expires == nil
}

// Branch is one way through the rewrite phase.
type Branch struct {
	// When are the conditions that lead to it, all of them; empty: every
	// request.
	When []ir.HeaderMatch
	// Outcome is where it ends.
	Outcome Outcome
}

// Outcome is where a way through the rewrite phase ends: exactly one of
// Redirect and Direct, or neither (the request is forwarded, with its path
// rewritten when Rewrite is set).
type Outcome struct {
	Redirect *ir.Redirect
	Direct   *ir.DirectResponse
	Rewrite  *ir.RegexRewrite
	// Reselect, with Rewrite, is a rewrite ... last to a literal path:
	// nginx chooses the location again for it. The snippet's own rewrite
	// phase, run again on that path, forwards it unchanged (else the
	// snippet is refused), so that the request is forwarded with the new
	// path where the front-end finds the location it is in chosen again,
	// and takes the location chosen otherwise.
	Reselect *Reselect `json:",omitempty"`
	// Edits, when set, are the header changes of the if block the request
	// ended in (merged with its block's), in place of the block's.
	Edits *Edits
}

// Answers says whether the outcome answers the request itself (nginx's
// return and redirecting rewrite), so that nothing after the rewrite phase
// (access checks, authentication, limits, the redirect to HTTPS, the
// upstream) applies.
func (o Outcome) Answers() bool { return o.Redirect != nil || o.Direct != nil }

// Location is a location block of a server snippet.
type Location struct {
	// Match is how nginx selects it: Modifier "=" (exact), "~" or "~*"
	// (regular expression, Path then an RE2 over the whole path), or ""
	// (a prefix of the path, as a string).
	Modifier string
	Path     string
	// Raw is the location's argument as written.
	Raw string
	// Line is the location directive's line.
	Line int
	// regexSrc is a regex location's expression as nginx reads it.
	regexSrc string
	// Result is the block's own: its Branches end in an answer for every
	// request (a snippet location that would serve files or proxy is
	// refused).
	Result
}

// Verdict is what became of one directive.
type Verdict struct {
	Line      int    `json:"line"`
	Directive string `json:"directive"`
	// Verdict is "translated", "no effect" (nginx's does nothing here
	// either) or "refused".
	Verdict string `json:"verdict"`
	Note    string `json:"note,omitempty"`
}

// The verdicts.
const (
	Translated = "translated"
	NoEffect   = "no effect"
	Refused    = "refused"
)

// Refusal is why a snippet is not applied: the first directive it cannot
// translate whole.
type Refusal struct {
	Directive string
	Line      int
	Why       string
	// Nginx, when set, is a directive further on that nginx itself
	// refuses (nginxRefusesToo): the snippet never ran under
	// ingress-nginx either.
	Nginx *Refusal
}

func (r *Refusal) Error() string {
	s := r.Why
	if r.Directive != "" {
		s = fmt.Sprintf("directive %s (line %d): %s", r.Directive, r.Line, r.Why)
	}
	if r.Nginx != nil {
		s += "; nginx itself refuses the snippet at " + r.Nginx.Error()
	}
	return s
}

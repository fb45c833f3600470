package ir

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ResponseRewrite changes what an upstream's response says of its own
// URLs and cookies, as nginx's proxy_redirect, proxy_cookie_domain,
// proxy_cookie_path and proxy_cookie_flags do. A nil field changes
// nothing.
type ResponseRewrite struct {
	// Redirect: a Location header, or the url= part of a Refresh header,
	// that starts with From (case-sensitive) has that part replaced by To.
	Redirect *Replace `json:"redirect,omitempty"`
	// CookieDomain: a Set-Cookie whose Domain attribute is From, in any
	// case and a leading dot of the attribute ignored, gets To instead
	// (the dot kept). From and To have no leading dot.
	CookieDomain *Replace `json:"cookieDomain,omitempty"`
	// CookiePath: a Set-Cookie whose Path attribute starts with From
	// (case-sensitive) has that part replaced by To.
	CookiePath *Replace `json:"cookiePath,omitempty"`
	// CookieFlags: each Set-Cookie of the upstream whose name the first
	// matching rule matches gets that rule's flags, after the domain and
	// path are rewritten, as nginx's proxy_cookie_flags does
	// (ngx_http_proxy_rewrite_cookie_flags). Rules in nginx's order.
	CookieFlags []CookieFlagsRule `json:"cookieFlags,omitempty"`
	// Body replaces text in the bodies of the upstream's responses, as
	// nginx's sub_filter does.
	Body *BodySubstitution `json:"body,omitempty"`
}

// BodySubstitution replaces text in the body of each response of its
// media types, as nginx's sub_filter does
// (src/http/modules/ngx_http_sub_filter_module.c): the body is read from
// its start, and at each position the first pair whose From the body
// holds there, in ASCII case, is replaced by its To, the search going on
// after it. Such a response loses its Content-Length (its length
// changes) and, unless KeepLastModified, its Last-Modified and ETag;
// with it, a strong ETag is made weak and an unquoted one removed
// (ngx_http_weak_etag). A response with a Content-Length of 0 is left
// alone.
type BodySubstitution struct {
	// Pairs are tried in this order at each position: nginx's is the
	// order written, since the pairs that match at one position share
	// their first bytes, by one of which ngx_http_sub_init_tables sorts
	// them, stably. From is not empty and has no ASCII capital letter:
	// it is compared with the body's bytes lowered. To may be empty.
	// Neither holds NUL; both are UTF-8.
	Pairs []Replace `json:"pairs"`
	// Once: each pair replaces its first occurrence only
	// (sub_filter_once on, nginx's default).
	Once bool `json:"once,omitempty"`
	// Types are the media types besides text/html whose responses are
	// rewritten, lower case; "*" alone: every response, one without a
	// Content-Type too. A response's type is its Content-Type up to a
	// ";" that starts a charset parameter, lowered, as nginx reads it
	// (ngx_http_upstream_copy_content_type).
	Types []string `json:"types,omitempty"`
	// KeepLastModified: sub_filter_last_modified on.
	KeepLastModified bool `json:"keepLastModified,omitempty"`
}

// MaxBodyPairs is nginx's bound on a location's sub_filter pairs.
const MaxBodyPairs = 255

func (b *BodySubstitution) validate() []error {
	var v violations
	switch n := len(b.Pairs); {
	case n == 0:
		v.add("Pairs", ErrNoOp, "body substitution: no pairs")
	case n > MaxBodyPairs:
		v.add("Pairs", ErrOutOfRange, "body substitution: %d pairs, past nginx's %d", n, MaxBodyPairs)
	}
	for i, p := range b.Pairs {
		field := fmt.Sprintf("Pairs[%d]", i)
		switch {
		case p.From == "":
			v.add(field+".From", ErrNoOp, "body substitution: nothing to replace")
		case strings.ToLower(p.From) != p.From:
			v.add(field+".From", ErrBadContent, "body substitution: %q is not lower case", p.From)
		case strings.ContainsRune(p.From+p.To, 0) || !utf8.ValidString(p.From+p.To):
			v.add(field, ErrBadContent, "body substitution: NUL or bytes that are not UTF-8")
		}
	}
	for i, t := range b.Types {
		if t == "*" && len(b.Types) == 1 {
			continue
		}
		if !isMediaType(t) {
			v.add(fmt.Sprintf("Types[%d]", i), ErrBadName, "body substitution: %q is not a lower-case media type (or * alone)", t)
		}
	}
	return v.errors()
}

// isMediaType says whether t is type/subtype of lower-case token
// characters.
func isMediaType(t string) bool {
	typ, sub, ok := strings.Cut(t, "/")
	token := func(s string) bool { return s != "" && !strings.HasPrefix(s, ":") && validHeaderName(s) == nil }
	return ok && token(typ) && token(sub) && strings.ToLower(t) == t
}

// CookieFlagsRule is one proxy_cookie_flags directive: the cookies it
// matches by name and the flags it adds or removes. A rule that matches
// ends the search even with no flags (nginx ignores a flag it does not
// know, at run time).
type CookieFlagsRule struct {
	Cookie CookieName   `json:"cookie"`
	Flags  []CookieFlag `json:"flags,omitempty"`
}

// CookieName matches a cookie's name, ASCII letters in any case (nginx
// compares a name with ngx_strncasecmp and compiles its expressions
// caseless, bytes without UTF-8): the whole name (Exact), its start
// (Prefix), its end (Suffix) or any part (Contains; empty Text: every
// cookie). Text is printable ASCII without ";".
type CookieName struct {
	Match CookieNameMatch `json:"match"`
	Text  string          `json:"text,omitempty"`
}

// CookieNameMatch is how a CookieName's text meets the name.
type CookieNameMatch string

// The ways a name is matched.
const (
	CookieNameExact    CookieNameMatch = "Exact"
	CookieNamePrefix   CookieNameMatch = "Prefix"
	CookieNameSuffix   CookieNameMatch = "Suffix"
	CookieNameContains CookieNameMatch = "Contains"
)

// CookieFlag is a flag of proxy_cookie_flags, as nginx spells it
// (ngx_http_proxy_cookie_flags_masks): several may be given, even
// contradicting ones, whose effect is nginx's (the renderer follows
// ngx_http_proxy_edit_cookie_flags).
type CookieFlag string

// The flags nginx knows.
const (
	CookieSecure         CookieFlag = "secure"
	CookieNoSecure       CookieFlag = "nosecure"
	CookieHTTPOnly       CookieFlag = "httponly"
	CookieNoHTTPOnly     CookieFlag = "nohttponly"
	CookieSameSiteStrict CookieFlag = "samesite=strict"
	CookieSameSiteLax    CookieFlag = "samesite=lax"
	CookieSameSiteNone   CookieFlag = "samesite=none"
	CookieNoSameSite     CookieFlag = "nosamesite"
)

// CookieFlags are the flags nginx knows, in its order.
func CookieFlags() []CookieFlag {
	return []CookieFlag{CookieSecure, CookieNoSecure, CookieHTTPOnly, CookieNoHTTPOnly,
		CookieSameSiteStrict, CookieSameSiteLax, CookieSameSiteNone, CookieNoSameSite}
}

// validate checks the rule; an error names what is wrong.
func (r CookieFlagsRule) validate() []error {
	var v violations
	switch r.Cookie.Match {
	case CookieNameExact, CookieNamePrefix, CookieNameSuffix, CookieNameContains:
	default:
		v.add("Cookie.Match", ErrUnknownValue, "cookie flags: name match %q", r.Cookie.Match)
	}
	switch t := r.Cookie.Text; {
	case r.Cookie.Match == CookieNameExact && t == "":
		v.add("Cookie.Text", ErrBadName, "cookie flags: no name to match exactly")
	case strings.ContainsFunc(t, func(c rune) bool { return c < 0x21 || c > 0x7e || c == ';' }):
		v.add("Cookie.Text", ErrBadName, "cookie flags: name %q is not printable ASCII without ; and spaces", t)
	}
	for i, f := range r.Flags {
		if !knownCookieFlag(f) {
			v.add(fmt.Sprintf("Flags[%d]", i), ErrUnknownValue, "cookie flags: flag %q", f)
		}
	}
	return v.errors()
}

func knownCookieFlag(f CookieFlag) bool { return slices.Contains(CookieFlags(), f) }

// Replace is text replaced by other text. From is not empty; neither
// holds control characters, and in a cookie neither holds ";", "," or
// white space.
type Replace struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func (r *ResponseRewrite) validate() []error {
	var v violations
	check := func(field, what string, rp *Replace, cookie bool) {
		switch {
		case rp == nil:
		case rp.From == "":
			v.add(field+".From", ErrNoOp, "response rewrite %s: nothing to replace", what)
		case hasControl(rp.From) || hasControl(rp.To):
			v.add(field, ErrBadHeader, "response rewrite %s: control characters", what)
		case cookie && (strings.ContainsAny(rp.From+rp.To, ";, \t") || strings.HasPrefix(rp.From, ".") && what == "cookie domain"):
			v.add(field, ErrBadHeader, "response rewrite %s: %q to %q is no cookie attribute", what, rp.From, rp.To)
		}
	}
	check("Redirect", "redirect", r.Redirect, false)
	check("CookieDomain", "cookie domain", r.CookieDomain, true)
	check("CookiePath", "cookie path", r.CookiePath, true)
	for i, rule := range r.CookieFlags {
		v.nest(fmt.Sprintf("CookieFlags[%d]", i), "", ErrBadValue, rule.validate()...)
	}
	if len(r.CookieFlags) > 0 && !slices.ContainsFunc(r.CookieFlags, func(c CookieFlagsRule) bool { return len(c.Flags) > 0 }) {
		// A flagless rule only stops the search: with no flags in any,
		// the list changes nothing.
		v.add("CookieFlags", ErrNoOp, "cookie flags: no rule has a flag")
	}
	if r.Body != nil {
		v.nest("Body", "", ErrBadValue, r.Body.validate()...)
	}
	if r.Redirect == nil && r.CookieDomain == nil && r.CookiePath == nil && len(r.CookieFlags) == 0 && r.Body == nil {
		v.add("", ErrNoOp, "response rewrite rewrites nothing")
	}
	return v.errors()
}

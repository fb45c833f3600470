package ir

import (
	"fmt"
	"slices"
	"strings"
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
	if r.Redirect == nil && r.CookieDomain == nil && r.CookiePath == nil && len(r.CookieFlags) == 0 {
		v.add("", ErrNoOp, "response rewrite rewrites nothing")
	}
	return v.errors()
}

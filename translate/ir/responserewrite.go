package ir

import (
	"strings"
)

// ResponseRewrite changes what an upstream's response says of its own
// URLs, as nginx's proxy_redirect, proxy_cookie_domain and
// proxy_cookie_path do. A nil field changes nothing.
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
}

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
	if r.Redirect == nil && r.CookieDomain == nil && r.CookiePath == nil {
		v.add("", ErrNoOp, "response rewrite rewrites nothing")
	}
	return v.errors()
}

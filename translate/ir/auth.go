package ir

import (
	"strings"
)

// Auth is a route's authentication, done by the authorisation service
// beside Envoy (internal/authz), which Envoy asks before forwarding. Every
// part present must let the request in.
type Auth struct {
	// Basic is nginx's auth_basic; nil: none.
	Basic *BasicAuth `json:"basic,omitempty"`
	// External is nginx's auth_request to an HTTP auth service
	// (auth_external.go); nil: none.
	External *ExternalAuth `json:"external,omitempty"`
	// Any lets a request in when one of the checks does (nginx's
	// satisfy any): its address by Address, or Basic, or External. The
	// default asks every part present.
	Any bool `json:"any,omitempty"`
	// Address, with Any, is the route's address check, decided with the
	// authentication instead of before it (the route then has no
	// IPRules of its own); nil: none.
	Address *IPRules `json:"address,omitempty"`
}

// BasicAuth asks the client for a user and password of a user file.
type BasicAuth struct {
	// Realm is the realm of the challenge (WWW-Authenticate: Basic
	// realm="..."), which may be empty.
	Realm string `json:"realm"`
	// Users is the user file: "user:hash" lines, as htpasswd writes them.
	// It is the Secret's content, which Envoy holds in its route
	// configuration; inspection output shows it redacted.
	Users string `json:"users"`
}

func (a *Auth) validate() []error {
	var v violations
	if a.Basic == nil && a.External == nil {
		v.add("", ErrNoOp, "auth: no kind of authentication")
	}
	if e := a.External; e != nil {
		v.nest("External", "", ErrBadValue, e.validate()...)
	}
	if r := a.Address; r != nil {
		if !a.Any {
			v.add("Address", ErrConflict, "auth: an address check without any")
		}
		r.check(&v, "Address", "auth: an empty address check", "auth: address")
	}
	if b := a.Basic; b != nil {
		// The realm is written into a header between quotes.
		if hasControl(b.Realm) || strings.ContainsAny(b.Realm, `"\`) {
			v.add("Basic.Realm", ErrBadHeader, "basic auth: realm %q is not a quoted-string's content", b.Realm)
		}
		if strings.ContainsRune(b.Users, 0) {
			v.add("Basic.Users", ErrBadContent, "basic auth: the user file holds a NUL")
		}
	}
	return v.errors()
}

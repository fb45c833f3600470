package ir

import (
	"strings"
)

// MirrorTail is what follows a MirrorPath's Prefix.
type MirrorTail string

const (
	// MirrorQuery: "?" and the request's query, when it has one (nginx's
	// proxy_pass with a literal URI in its mirror location).
	MirrorQuery MirrorTail = "Query"
	// MirrorRequestURI: the request's path and query as the client sent
	// them, before any rewrite (nginx's $request_uri).
	MirrorRequestURI MirrorTail = "RequestURI"
)

// MirrorPath is the path of a request's copies.
type MirrorPath struct {
	// Prefix is empty or a path: "/" then no control characters, spaces,
	// "%", "?" or "#".
	Prefix string     `json:"prefix,omitempty"`
	Then   MirrorTail `json:"then"`
}

func (m *Mirror) validate() []error {
	var v violations
	if m.Host != "" && (hasControl(m.Host) || strings.ContainsAny(m.Host, " /@%")) {
		v.add("Host", ErrBadHost, "mirror host %q", m.Host)
	}
	if p := m.Path; p != nil {
		if p.Prefix != "" && (!strings.HasPrefix(p.Prefix, "/") || hasControl(p.Prefix) || strings.ContainsAny(p.Prefix, " %?#")) {
			v.add("Path.Prefix", ErrBadPath, "mirror path prefix %q", p.Prefix)
		}
		if p.Then != MirrorQuery && p.Then != MirrorRequestURI {
			v.add("Path.Then", ErrUnknownValue, "mirror path: %q follows the prefix", p.Then)
		}
		if p.Prefix == "" && p.Then == MirrorQuery {
			v.add("Path", ErrBadPath, "mirror path: a query alone is no path")
		}
	}
	return v.errors()
}

package ir

import (
	"fmt"
)

// RequestBlock refuses (403) every request of a listener whose headers
// match one of its rules, before anything else is decided (ingress-nginx's
// block-user-agents and block-referers: a map of the header and a return
// 403 in every server, ahead of its locations).
type RequestBlock struct {
	// Headers are the rules, one per header name (sorted, unique).
	Headers []HeaderBlock `json:"headers"`
}

// HeaderBlock is what refuses a request by one header: any of its values.
type HeaderBlock struct {
	// Header is the lower-case header name.
	Header string `json:"header"`
	// Values are matched against the whole value, ignoring ASCII case
	// (nginx's map strings); "" matches a missing or empty header.
	Values []string `json:"values,omitempty"`
	// Regexes are RE2 expressions searched for in a value that is not
	// empty (nginx's map ~ and ~* entries; ~* as (?i)).
	Regexes []string `json:"regexes,omitempty"`
	// All refuses every request, whatever the header (a map's default).
	All bool `json:"all,omitempty"`
}

// validate checks the rules: names are tokens, sorted and unique;
// expressions compile.
func (b *RequestBlock) validate() error {
	if len(b.Headers) == 0 {
		return invalid("Headers", ErrNoOp, "a request block with no rule")
	}
	for i, h := range b.Headers {
		field := fmt.Sprintf("Headers[%d]", i)
		if err := validHeaderName(h.Header); err != nil || h.Header[0] == ':' {
			return invalid(field+".Header", ErrBadHeader, "request block: header %q: not a header name", h.Header)
		}
		if i > 0 && b.Headers[i-1].Header >= h.Header {
			kind := ErrUnsorted
			if b.Headers[i-1].Header == h.Header {
				kind = ErrDuplicate
			}
			return invalid(field+".Header", kind, "request block: headers not sorted and unique at %q", h.Header)
		}
		if len(h.Values) == 0 && len(h.Regexes) == 0 && !h.All {
			return invalid(field, ErrNoOp, "request block: header %q: no value", h.Header)
		}
		for j, re := range h.Regexes {
			if err := validRegex(re); err != nil {
				return invalid(fmt.Sprintf("%s.Regexes[%d]", field, j), ErrBadRegex, "request block: header %q: regex %q: %w", h.Header, re, err)
			}
		}
	}
	return nil
}

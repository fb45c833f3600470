package ir

import (
	"fmt"
	"slices"
	"strings"
)

// ErrorPages replace a route's responses of some codes, whether from the
// upstream or from Envoy, by the answer to an internal GET of Path on the
// same virtual host (ingress-nginx's custom-http-errors, whose error_page
// sends to the default backend): that answer is the client's, whatever
// its status. The request keeps its headers, with Headers and X-Code (the
// replaced code) set.
type ErrorPages struct {
	// Codes are sorted and unique, from 400 to 599.
	Codes []uint32 `json:"codes"`
	// Path is an absolute path, which some route of the virtual host
	// matches (the front-end's error route).
	Path    string   `json:"path"`
	Headers []Header `json:"headers,omitempty"`
}

func (e *ErrorPages) validate() []error {
	var v violations
	switch {
	case len(e.Codes) == 0:
		v.add("Codes", ErrNoOp, "error page codes %v are not sorted, unique and some", e.Codes)
	case !slices.IsSorted(e.Codes):
		v.add("Codes", ErrUnsorted, "error page codes %v are not sorted, unique and some", e.Codes)
	case len(slices.Compact(slices.Clone(e.Codes))) != len(e.Codes):
		v.add("Codes", ErrDuplicate, "error page codes %v are not sorted, unique and some", e.Codes)
	}
	for i, c := range e.Codes {
		if c < 400 || c > 599 {
			v.add(fmt.Sprintf("Codes[%d]", i), ErrOutOfRange, "error page code %d is not from 400 to 599", c)
		}
	}
	if !strings.HasPrefix(e.Path, "/") || hasControl(e.Path) || strings.ContainsAny(e.Path, "?#% ") {
		v.add("Path", ErrBadPath, "error page path %q", e.Path)
	}
	for i, h := range e.Headers {
		if err := validHeaderName(h.Name); err != nil || strings.HasPrefix(h.Name, ":") {
			v.add(fmt.Sprintf("Headers[%d].Name", i), ErrBadHeader, "error page header %q", h.Name)
		}
		// A value is sent as it is: Envoy would read % as a command.
		if hasControl(h.Value) || strings.Contains(h.Value, "%") {
			v.add(fmt.Sprintf("Headers[%d].Value", i), ErrBadHeader, "error page header %s: value %q", h.Name, h.Value)
		}
	}
	return v.errors()
}

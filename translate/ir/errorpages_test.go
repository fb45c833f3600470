package ir

import (
	"strings"
	"testing"
)

func TestValidateErrorPages(t *testing.T) {
	pages := func() *ErrorPages {
		return &ErrorPages{Codes: []uint32{404, 503}, Path: "/.ingress-xds/error-pages/default/a", Headers: []Header{{Name: "X-Namespace", Value: "default"}}}
	}
	m := valid()
	m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ErrorPages: pages()}
	if err := m.Validate(); err != nil {
		t.Fatalf("the valid IR fails: %v", err)
	}
	for _, tc := range []struct {
		name    string
		breakIt func(*ErrorPages)
		want    string
	}{
		{"no code", func(e *ErrorPages) { e.Codes = nil }, "sorted, unique and some"},
		{"unsorted", func(e *ErrorPages) { e.Codes = []uint32{503, 404} }, "sorted, unique and some"},
		{"repeated", func(e *ErrorPages) { e.Codes = []uint32{404, 404} }, "sorted, unique and some"},
		{"out of range", func(e *ErrorPages) { e.Codes = []uint32{302} }, "not from 400 to 599"},
		{"relative path", func(e *ErrorPages) { e.Path = "errors" }, "error page path"},
		{"path with a query", func(e *ErrorPages) { e.Path = "/e?x=1" }, "error page path"},
		{"pseudo-header", func(e *ErrorPages) { e.Headers = []Header{{Name: ":path", Value: "/"}} }, "error page header"},
		{"a formatter command", func(e *ErrorPages) { e.Headers = []Header{{Name: "X-A", Value: "%REQ(cookie)%"}} }, "value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			e := pages()
			tc.breakIt(e)
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ErrorPages: e}
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

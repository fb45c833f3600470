package ir

import "testing"

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
		want    violation
	}{
		{"no code", func(e *ErrorPages) { e.Codes = nil }, route("Policy.ErrorPages.Codes", ErrNoOp, "sorted, unique and some")},
		{"unsorted", func(e *ErrorPages) { e.Codes = []uint32{503, 404} }, route("Policy.ErrorPages.Codes", ErrUnsorted, "sorted, unique and some")},
		{"repeated", func(e *ErrorPages) { e.Codes = []uint32{404, 404} }, route("Policy.ErrorPages.Codes", ErrDuplicate, "sorted, unique and some")},
		{"out of range", func(e *ErrorPages) { e.Codes = []uint32{302} }, route("Policy.ErrorPages.Codes[0]", ErrOutOfRange, "error page code 302 is not from 400 to 599")},
		{"relative path", func(e *ErrorPages) { e.Path = "errors" }, route("Policy.ErrorPages.Path", ErrBadPath, `error page path "errors"`)},
		{"path with a query", func(e *ErrorPages) { e.Path = "/e?x=1" }, route("Policy.ErrorPages.Path", ErrBadPath, `error page path "/e?x=1"`)},
		{"pseudo-header", func(e *ErrorPages) { e.Headers = []Header{{Name: ":path", Value: "/"}} }, route("Policy.ErrorPages.Headers[0].Name", ErrBadHeader, `error page header ":path"`)},
		{"a formatter command", func(e *ErrorPages) { e.Headers = []Header{{Name: "X-A", Value: "%REQ(cookie)%"}} }, route("Policy.ErrorPages.Headers[0].Value", ErrBadHeader, `value "%REQ(cookie)%"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			e := pages()
			tc.breakIt(e)
			m.VirtualHosts[0].Routes[0].Policy = &RoutePolicy{ErrorPages: e}
			wantViolations(t, m.Validate(), tc.want)
		})
	}
}

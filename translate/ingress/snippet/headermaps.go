package snippet

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The controller ConfigMap's add-headers and proxy-set-headers name a
// ConfigMap of headers, which ingress-nginx's template writes as
// directives (nginx.tmpl): each of add-headers' as a more_set_headers
// "name: value" at the http level, each of proxy-set-headers' as a
// proxy_set_header (grpc_set_header on a GRPC location) in every location
// it makes, after its own. The ConfigMap's values are quoted there, so
// nginx reads them whole, variables and all. They are translated here as
// those directives are in a snippet, directive by directive, never as
// text: a value cannot end a directive and start another (the injection
// of CVE-2025-15566).

// AddHeaders translates an add-headers ConfigMap's data: the response
// headers of every response, replaced (a more_set_headers at the http
// level, in the order of the names, as the template's range writes
// them); an empty value clears the header. A header not translated whole
// is an error naming it.
func AddHeaders(headers map[string]string) (*ir.HeaderChanges, error) {
	t := &translator{}
	e := &Edits{}
	for i, name := range slices.Sorted(maps.Keys(headers)) {
		d := nginxconf.Directive{Name: "more_set_headers", Args: []string{name + ": " + headers[name]}, Line: i + 1}
		if err := t.header(e, d, serverLevel); err != nil {
			return nil, headerMapError(name, err)
		}
	}
	if headerChangesEmpty(&e.Response) {
		return nil, nil
	}
	return &e.Response, nil
}

// ProxySetHeaders translates a proxy-set-headers ConfigMap's data for a
// location opts describe: the request headers the backend receives (a
// proxy_set_header of each, in the order of the names, after the
// template's own, as nginx 1.27.1 sends them: a second line beside the
// template's for a header it sets itself). A header not translated whole
// is an error naming it.
func ProxySetHeaders(headers map[string]string, opts Options) (*ir.HeaderChanges, error) {
	t := &translator{opts: opts}
	e := &Edits{}
	directive := "proxy_set_header"
	if opts.grpc() {
		directive = "grpc_set_header"
	}
	for i, name := range slices.Sorted(maps.Keys(headers)) {
		d := nginxconf.Directive{Name: directive, Args: []string{name, headers[name]}, Line: i + 1}
		if err := t.header(e, d, locationLevel); err != nil {
			return nil, headerMapError(name, err)
		}
	}
	if headerChangesEmpty(&e.Request) {
		return nil, nil
	}
	return &e.Request, nil
}

// headerMapError is err, a refusal of the directive a header became,
// said of the header.
func headerMapError(name string, err error) error {
	var r *Refusal
	if errors.As(err, &r) {
		if strings.HasPrefix(r.Why, "header "+name+":") {
			return errors.New(r.Why)
		}
		return fmt.Errorf("header %s: %s", name, r.Why)
	}
	return fmt.Errorf("header %s: %w", name, err)
}

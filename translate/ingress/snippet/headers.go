package snippet

import (
	"slices"
	"strings"
	"unicode"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func isHeaderDirective(name string) bool {
	switch name {
	case "more_set_headers", "more_clear_headers", "add_header", "proxy_set_header", "grpc_set_header", "proxy_hide_header", "grpc_hide_header",
		"more_set_input_headers", "more_clear_input_headers":
		return true
	}
	return false
}

// ifHeaderDirectives are the header directives nginx takes in a location's
// if block (their modules declare NGX_HTTP_LIF_CONF).
var ifHeaderDirectives = map[string]bool{
	"more_set_headers": true, "more_clear_headers": true, "add_header": true,
	"more_set_input_headers": true, "more_clear_input_headers": true,
}

// templateRequestHeaders are the request headers ingress-nginx's template
// sets with proxy_set_header in every location (nginx.tmpl): nginx never
// copies the client's own of these names, so more_set_input_headers and
// more_clear_input_headers change nothing upstream, and a snippet's
// proxy_set_header of one sends a second line beside the template's.
var templateRequestHeaders = []string{
	"host", "x-request-id", "x-real-ip", "x-forwarded-for", "x-forwarded-host", "x-forwarded-port",
	"x-forwarded-proto", "x-forwarded-scheme", "x-scheme", "x-original-forwarded-for", "proxy",
	"upgrade", "connection",
}

// framingHeaders are the headers Envoy owns (the framing and hop-by-hop
// headers): a snippet that sets one is refused.
var framingHeaders = []string{"content-length", "transfer-encoding", "keep-alive", "proxy-connection", "te", "trailer"}

// header takes one header directive into edits.
func (t *translator) header(e *Edits, d nginxconf.Directive, lv level) error {
	switch d.Name {
	case "more_set_headers", "more_set_input_headers":
		request := d.Name == "more_set_input_headers"
		var pairs []string
		for _, a := range d.Args {
			if strings.HasPrefix(a, "-") {
				return t.refuse(d, "option %s: not translated", a)
			}
			pairs = append(pairs, a)
		}
		if len(pairs) == 0 {
			return t.refuse(d, "no header")
		}
		applied := false
		for _, p := range pairs {
			name, value := moreHeader(p)
			if err := t.checkName(d, name); err != nil {
				return err
			}
			if request && slices.Contains(templateRequestHeaders, strings.ToLower(name)) {
				t.verdict(d, NoEffect, "ingress-nginx's template sets "+name+" itself: nginx sends the template's")
				continue
			}
			applied = true
			hc := &e.Response
			if request {
				hc = &e.Request
			}
			if value == "" {
				// "Name:" clears, as more_clear_headers.
				hc.Remove = appendOnce(hc.Remove, strings.ToLower(name))
				continue
			}
			h, err := t.headerValue(d, lv, name, value, !request)
			if err != nil {
				return err
			}
			// The later directive wins for the same name.
			hc.Set = slices.DeleteFunc(hc.Set, func(o ir.Header) bool { return strings.EqualFold(o.Name, name) })
			hc.Set = append(hc.Set, h)
		}
		if !applied {
			return nil
		}
	case "more_clear_headers", "more_clear_input_headers", "proxy_hide_header", "grpc_hide_header":
		request := d.Name == "more_clear_input_headers"
		hide := d.Name == "proxy_hide_header" || d.Name == "grpc_hide_header"
		if len(d.Args) == 0 || hide && len(d.Args) != 1 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		if d.Name == "grpc_hide_header" && lv == serverLevel {
			return t.refuse(d, "in a server-snippet: not translated")
		}
		if hide && lv != serverLevel {
			t.contextual = true
			if grpc := d.Name == "grpc_hide_header"; grpc != t.opts.grpc() && lv == locationLevel {
				if err := t.checkName(d, d.Args[0]); err != nil {
					return err
				}
				t.verdict(d, NoEffect, "the location proxies with the other module ("+map[bool]string{true: "proxy_pass", false: "grpc_pass"}[grpc]+"), which does not read it")
				return nil
			}
		}
		applied := false
		for _, name := range d.Args {
			if strings.HasPrefix(name, "-") {
				return t.refuse(d, "option %s: not translated", name)
			}
			if strings.Contains(name, "*") {
				return t.refuse(d, "wildcard %q: not translated", name)
			}
			if err := t.checkName(d, name); err != nil {
				return err
			}
			if request && slices.Contains(templateRequestHeaders, strings.ToLower(name)) {
				t.verdict(d, NoEffect, "ingress-nginx's template sets "+name+" itself: nginx sends the template's")
				continue
			}
			if d.Name == "proxy_hide_header" && t.passed[strings.ToLower(name)] {
				t.verdict(d, NoEffect, "the block's proxy_pass_header passes "+name)
				continue
			}
			applied = true
			if request {
				e.Request.Remove = appendOnce(e.Request.Remove, strings.ToLower(name))
			} else {
				e.Response.Remove = appendOnce(e.Response.Remove, strings.ToLower(name))
			}
		}
		if !applied {
			return nil
		}
	case "add_header":
		always := len(d.Args) == 3 && d.Args[2] == "always"
		if len(d.Args) != 2 && !always {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		if err := t.checkName(d, d.Args[0]); err != nil {
			return err
		}
		e.setsAddHeader = true
		if d.Args[1] == "" {
			t.verdict(d, NoEffect, "an empty value adds no header")
			return nil
		}
		if t.onlyAuthVars(d.Args[1]) && lv == locationLevel {
			// Without auth-url the variables are empty, and nginx adds
			// no header of an empty value.
			t.unlessAuth = append(t.unlessAuth, DirectiveRef{Directive: d.Name, Line: d.Line})
			t.verdict(d, NoEffect, "without auth-url the auth service's answer is empty and nginx adds no empty header; with auth-url it is not translated (the Ingress is refused)")
			return nil
		}
		h, err := t.headerValue(d, lv, d.Args[0], d.Args[1], true)
		if err != nil {
			return err
		}
		if always {
			e.Response.Add = append(e.Response.Add, h)
		} else {
			e.Response.AddOnSuccess = append(e.Response.AddOnSuccess, h)
		}
	case "proxy_set_header", "grpc_set_header":
		if len(d.Args) != 2 {
			return t.refuse(d, "wrong number of arguments: nginx refuses it")
		}
		name := d.Args[0]
		if err := t.checkName(d, name); err != nil {
			return err
		}
		if lv == locationLevel {
			t.contextual = true
			if grpc := d.Name == "grpc_set_header"; grpc != t.opts.grpc() {
				// The template proxies with one module; the other's
				// header list is never read.
				if _, err := pieces(d.Args[1]); err != nil {
					return t.refuse(d, "header %s: %v", name, err)
				}
				why := "the location proxies with grpc_pass (backend-protocol GRPC or GRPCS), which sends grpc_set_header's list"
				if grpc {
					why = "the location proxies with proxy_pass, not grpc_pass (backend-protocol is not GRPC or GRPCS)"
				}
				t.verdict(d, NoEffect, why)
				return nil
			}
		}
		if lv != locationLevel {
			// ingress-nginx writes its whole proxy_set_header list in
			// every location it makes, and nginx inherits the outer
			// level's list only into a location that has none.
			t.verdict(d, NoEffect, "each of ingress-nginx's locations has its own proxy_set_header list, so a server's never reaches the Ingress's paths")
			return nil
		}
		lower := strings.ToLower(name)
		switch {
		case lower == "host":
			return t.hostHeader(d)
		case lower == "upgrade" || lower == "connection":
			t.verdict(d, NoEffect, "ingress-nginx already passes upgrades, and Envoy owns the Connection and Upgrade headers")
			return nil
		}
		if t.usesAuthVar(d.Args[1]) {
			if slices.Contains(templateRequestHeaders, lower) {
				return t.refuse(d, "the auth service's answer in a header ingress-nginx's template sets: not translated")
			}
			h, err := t.authHeader(d, name, d.Args[1])
			if err != nil {
				return err
			}
			e.Request.Set = slices.DeleteFunc(e.Request.Set, func(o ir.Header) bool { return strings.EqualFold(o.Name, name) })
			e.AuthHeaders = slices.DeleteFunc(e.AuthHeaders, func(o ir.AuthHeader) bool { return strings.EqualFold(o.Name, name) })
			e.AuthHeaders = append(e.AuthHeaders, h)
			t.verdict(d, Translated, "")
			return nil
		}
		if v := d.Args[1]; v == "$proxy_add_x_forwarded_for" || v == "${proxy_add_x_forwarded_for}" {
			return t.addForwardedFor(e, d, name)
		}
		if d.Args[1] == "" {
			if slices.Contains(templateRequestHeaders, lower) {
				// An empty entry cannot cancel the template's.
				t.verdict(d, NoEffect, "an empty value does not cancel the template's "+name)
				return nil
			}
			e.Request.Remove = appendOnce(e.Request.Remove, lower)
			t.verdict(d, Translated, "")
			return nil
		}
		h, err := t.headerValue(d, lv, name, d.Args[1], false)
		if err != nil {
			return err
		}
		if slices.Contains(templateRequestHeaders, lower) {
			// A second line beside the template's (nginx 1.27.1 sends
			// every entry of the list).
			e.Request.Add = append(e.Request.Add, h)
		} else {
			e.Request.Set = slices.DeleteFunc(e.Request.Set, func(o ir.Header) bool { return strings.EqualFold(o.Name, name) })
			e.Request.Set = append(e.Request.Set, h)
		}
	}
	t.verdict(d, Translated, "")
	return nil
}

// hostHeader takes proxy_set_header Host. ingress-nginx's nginx (1.27.1)
// sends the snippet's Host as a second Host line after the template's
// own ($best_http_host, or upstream-vhost's value), which Envoy cannot
// send. A backend reads the first line or refuses the request (RFC 9112
// asks a server to refuse two Host lines): neither reads the snippet's.
// So where the snippet's value is the client's host ($host, $http_host,
// $best_http_host), which is what the template's line holds but for the
// port and case $host drops, Envoy sends the template's line alone: what
// a backend that read the first line got (docs/snippets.md,
// Differences). Any other value, which the user meant the backend to
// see, is refused.
func (t *translator) hostHeader(d nginxconf.Directive) error {
	switch d.Args[1] {
	case "$host", "${host}", "$http_host", "${http_host}", "$best_http_host", "${best_http_host}":
		t.verdict(d, Translated, "nginx sends it as a second Host line after the template's, which a backend reading the first never sees; Envoy sends the template's alone")
		return nil
	}
	if err := t.nginxKnows(d, d.Args[1]); err != nil {
		return err
	}
	return t.refuse(d, "a Host other than the client's: ingress-nginx would send it as a second Host line after its own, which Envoy cannot; the upstream-vhost annotation sets the Host")
}

// addForwardedFor takes proxy_set_header NAME $proxy_add_x_forwarded_for.
// nginx's value is the request's X-Forwarded-For lines joined by ", ",
// then ", " and $remote_addr, or $remote_addr alone where the client sent
// none (ngx_http_proxy_module), beside the template's own line. At the
// route the client's X-Forwarded-For is no longer there: the listener has
// replaced it (or appended the peer, under compute-full-forwarded-for),
// having first copied it whole into X-Original-Forwarded-For, as the
// template does; the route reads that copy. Where forwarded-for-header
// names another header, the copy is of that one, and the directive is
// refused. Two lines, the client's list (none where it sent none: Envoy
// adds no empty value) then its address, are one list in HTTP, as nginx's
// one line is.
func (t *translator) addForwardedFor(e *Edits, d nginxconf.Directive, name string) error {
	t.contextual = true
	if !slices.Contains(templateRequestHeaders, strings.ToLower(name)) {
		return t.refuse(d, "header %s: $proxy_add_x_forwarded_for in a header ingress-nginx's template does not set, where it would replace the client's: not translated (X-Forwarded-For is)", name)
	}
	if t.opts.ClientHeader != "" {
		return t.refuse(d, "header %s: $proxy_add_x_forwarded_for: with forwarded-for-header %s, the client's X-Forwarded-For is not kept for the route: not translated", name, t.opts.ClientHeader)
	}
	e.Request.Add = append(e.Request.Add,
		ir.Header{Name: name, Parts: []ir.ValuePart{{Var: ir.VarRequestHeader, Name: "x-original-forwarded-for"}}},
		ir.Header{Name: name, Parts: []ir.ValuePart{{Var: ir.VarClientAddress}}})
	t.verdict(d, Translated, "")
	return nil
}

// authHeader is a proxy_set_header value of text and auth_request_set
// variables.
func (t *translator) authHeader(d nginxconf.Directive, name, value string) (ir.AuthHeader, error) {
	ps, err := pieces(value)
	if err != nil {
		return ir.AuthHeader{}, t.refuse(d, "header %s: %v", name, err)
	}
	h := ir.AuthHeader{Name: name}
	for _, p := range ps {
		switch header, ok := t.authVars[p.name]; {
		case p.name == "":
			h.Parts = append(h.Parts, ir.AuthValuePart{Text: p.text})
		case ok:
			h.Parts = append(h.Parts, ir.AuthValuePart{FromAnswer: header})
		default:
			return ir.AuthHeader{}, t.refuse(d, "header %s: $%s beside the auth service's answer: not translated", name, p.name)
		}
	}
	return h, nil
}

func (t *translator) checkName(d nginxconf.Directive, name string) error {
	if !isToken(name) {
		return t.refuse(d, "header name %q is not an HTTP token", name)
	}
	if slices.Contains(framingHeaders, strings.ToLower(name)) {
		return t.refuse(d, "header %s makes the message's framing, which Envoy owns", name)
	}
	if strings.HasPrefix(strings.ToLower(name), "x-envoy-") || strings.HasPrefix(strings.ToLower(name), "x-ingress-xds-") {
		return t.refuse(d, "header %s is Envoy's or ingress-xds's own", name)
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c > 0x7e || c <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return false
		}
	}
	return true
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// merge is the edits of an if block (inner) that nginx switches to,
// inheriting from its block (outer): headers-more's directives of both,
// the outer's first (HM's merge_loc_conf); add_header's of the inner
// alone when it has any, else the outer's (ngx_http_headers_module).
func merge(outer, inner *Edits) *Edits {
	out := &Edits{}
	for _, side := range []struct{ out, o, i *ir.HeaderChanges }{
		{&out.Request, &outer.Request, &inner.Request}, {&out.Response, &outer.Response, &inner.Response},
	} {
		side.out.Remove = append(slices.Clone(side.o.Remove), side.i.Remove...)
		set := slices.Clone(side.o.Set)
		for _, h := range side.i.Set {
			set = slices.DeleteFunc(set, func(o ir.Header) bool { return strings.EqualFold(o.Name, h.Name) })
			set = append(set, h)
		}
		side.out.Set = set
	}
	out.Request.Add = slices.Clone(outer.Request.Add)
	add := outer
	if inner.setsAddHeader {
		add = inner
	}
	out.Response.Add, out.Response.AddOnSuccess = slices.Clone(add.Response.Add), slices.Clone(add.Response.AddOnSuccess)
	out.Response.Expires = outer.Response.Expires // expires is refused in an if
	out.setsAddHeader = outer.setsAddHeader || inner.setsAddHeader
	return out
}

// onlyAuthVars says whether value is made of auth_request_set variables
// alone.
func (t *translator) onlyAuthVars(value string) bool {
	ps, err := pieces(value)
	if err != nil || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if _, ok := t.authVars[p.name]; !ok || p.name == "" {
			return false
		}
	}
	return true
}

// moreHeader splits headers-more's "Name: value" as its parser does
// (ngx_http_headers_more_parse_header): the name ends at the first colon
// or white space, and the value starts after the colons and white space
// that follow it, so "X-Frame-Options SAMEORIGIN" sets X-Frame-Options.
func moreHeader(raw string) (name, value string) {
	raw = strings.TrimLeftFunc(raw, unicode.IsSpace)
	end := strings.IndexFunc(raw, func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
	if end < 0 {
		return raw, ""
	}
	value = strings.TrimLeftFunc(raw[end:], func(r rune) bool { return r == ':' || unicode.IsSpace(r) })
	return raw[:end], strings.TrimRightFunc(value, unicode.IsSpace)
}

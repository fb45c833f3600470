package snippet

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// piece is a piece of an nginx value: text, or a variable's name (without
// "$"; a capture is its digit).
type piece struct {
	text string
	name string
}

// pieces splits an nginx value into text and variables as nginx's script
// compiler does ($name or ${name}; a name is letters, digits and "_").
func pieces(s string) ([]piece, error) {
	var out []piece
	var text strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' {
			text.WriteByte(c)
			continue
		}
		var name string
		if i+1 < len(s) && s[i+1] == '{' {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("%q: a ${ without }", s)
			}
			name = s[i+2 : i+2+end]
			i += 2 + end
		} else {
			j := i + 1
			for j < len(s) && (isAlnum(s[j]) || s[j] == '_') {
				j++
			}
			name = s[i+1 : j]
			i = j - 1
		}
		if !isVariableName(name) {
			return nil, fmt.Errorf("%q: a $ without a variable's name, which nginx refuses", s)
		}
		if text.Len() > 0 {
			out = append(out, piece{text: text.String()})
			text.Reset()
		}
		out = append(out, piece{name: name})
	}
	if text.Len() > 0 {
		out = append(out, piece{text: text.String()})
	}
	return out, nil
}

// isVariableName says whether s is an nginx variable's name.
func isVariableName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// valueVariable is the IR variable an nginx variable in a header value
// is, for the request (or, response set, the response) headers.
func valueVariable(name string, response bool) (ir.ValuePart, bool) {
	switch {
	case name == "host" || name == "http_host":
		// $host lower-cases and drops the port; Envoy's :authority has
		// no port (the listeners strip it) and keeps the client's case.
		return ir.ValuePart{Var: ir.VarHost}, true
	case name == "remote_addr":
		return ir.ValuePart{Var: ir.VarClientAddress}, true
	case name == "scheme":
		return ir.ValuePart{Var: ir.VarScheme}, true
	case name == "request_uri":
		return ir.ValuePart{Var: ir.VarPath}, true
	case name == "uri":
		// nginx's is decoded; Envoy's, as the client sent it.
		return ir.ValuePart{Var: ir.VarURI}, true
	case name == "request_id" || name == "req_id":
		return ir.ValuePart{Var: ir.VarRequestID}, true
	case name == "ssl_client_escaped_cert":
		// Empty on a host without auth-tls, where nginx asks for no
		// certificate, as Envoy's is.
		return ir.ValuePart{Var: ir.VarClientCert}, true
	case name == "ssl_client_s_dn":
		return ir.ValuePart{Var: ir.VarClientSubject}, true
	case name == "ssl_client_i_dn":
		return ir.ValuePart{Var: ir.VarClientIssuer}, true
	case strings.HasPrefix(name, "http_") && len(name) > len("http_"):
		return ir.ValuePart{Var: ir.VarRequestHeader, Name: headerOfVariable(strings.TrimPrefix(name, "http_"))}, true
	case response && (strings.HasPrefix(name, "upstream_http_") || strings.HasPrefix(name, "sent_http_")):
		n := strings.TrimPrefix(strings.TrimPrefix(name, "upstream_http_"), "sent_http_")
		if n == "" {
			return ir.ValuePart{}, false
		}
		return ir.ValuePart{Var: ir.VarResponseHeader, Name: headerOfVariable(n)}, true
	}
	return ir.ValuePart{}, false
}

// headerOfVariable is the header a $http_* variable reads: its name
// lower-cased, "_" for "-".
func headerOfVariable(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", "-"))
}

// headerValue is a header directive's value as an IR header: literal, or
// made of parts where it holds variables the IR has.
func (t *translator) headerValue(d nginxconf.Directive, lv level, name, value string, response bool) (ir.Header, error) {
	if hasControl(value) {
		return ir.Header{}, t.refuse(d, "header %s: the value holds control characters", name)
	}
	ps, err := pieces(value)
	if err != nil {
		return ir.Header{}, t.refuse(d, "header %s: %v", name, err)
	}
	if len(ps) <= 1 && (len(ps) == 0 || ps[0].name == "") {
		return ir.Header{Name: name, Value: value}, nil
	}
	var parts []ir.ValuePart
	for _, p := range ps {
		if p.name == "" {
			parts = append(parts, ir.ValuePart{Text: p.text})
			continue
		}
		if v, ok := t.opts.Vars[p.name]; ok && lv == locationLevel {
			if t.declared[p.name] {
				return ir.Header{}, t.refuse(d, "header %s: $%s, which the snippet sets again: not translated", name, p.name)
			}
			t.contextual = true
			parts = append(parts, ir.ValuePart{Text: v})
			continue
		}
		if _, auth := t.authVars[p.name]; auth {
			return ir.Header{}, t.refuse(d, "header %s: $%s, the auth service's answer, is translated in proxy_set_header only", name, p.name)
		}
		v, ok := valueVariable(p.name, response)
		if !ok {
			return ir.Header{}, t.refuse(d, "header %s: variable $%s: %s", name, p.name, t.unknownVariable(p.name))
		}
		parts = append(parts, v)
	}
	return ir.Header{Name: name, Parts: parts}, nil
}

// nginxKnows refuses d where value, which is not translated, holds what
// nginx itself refuses: a $ without a name, or a variable nginx does not
// know (unknownVariable). Such a refusal is the one to give, as the
// snippet never ran under ingress-nginx.
func (t *translator) nginxKnows(d nginxconf.Directive, value string) error {
	ps, err := pieces(value)
	if err != nil {
		return t.refuse(d, "%v", err)
	}
	for _, p := range ps {
		if p.name == "" || t.declared[p.name] {
			continue
		}
		if why := t.unknownVariable(p.name); strings.HasSuffix(why, "nginx refuses it") {
			return t.refuse(d, "variable $%s: %s", p.name, why)
		}
	}
	return nil
}

// unknownVariable says why a variable is not translated, naming the ones
// that nginx itself does not know in ingress-nginx's build and that no
// directive of the snippet declares: a name with upper case (nginx's own
// are lower case, and a template placeholder such as ${DOMAIN} left
// unrendered is one), the legacy GeoIP module's, which ingress-nginx's
// nginx does not load ($geoip2_* are GeoIP2's), and the opentracing
// module's, which it no longer ships.
func (t *translator) unknownVariable(name string) string {
	if t.declared[name] {
		return "not translated"
	}
	prefixed := slices.ContainsFunc([]string{"http_", "sent_http_", "upstream_http_", "cookie_", "upstream_cookie_", "arg_"},
		func(p string) bool { return strings.HasPrefix(name, p) })
	switch {
	case strings.ToLower(name) != name && !prefixed:
		return "not a variable nginx knows: nginx refuses it"
	case name == "proxy_add_x_forwarded_for":
		return "not translated but as the whole value of proxy_set_header X-Forwarded-For"
	case strings.HasPrefix(name, "geoip_"):
		return "the legacy GeoIP module's, which ingress-nginx's nginx does not load: nginx refuses it"
	case strings.HasPrefix(name, "opentracing_"):
		// changelog/controller-1.10.0.md: "This version dropped
		// Opentracing and zipkin modules, just Opentelemetry is supported".
		return "the opentracing module's, which ingress-nginx dropped in v1.10: nginx refuses it"
	}
	return "not translated"
}

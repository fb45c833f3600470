package snippet

import (
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// authTemplateHeaders are the headers ingress-nginx's template sets on
// the auth subrequest itself (nginx.tmpl's external auth location): a
// snippet's proxy_set_header of one would send a second line, which the
// authorisation service does not.
var authTemplateHeaders = []string{
	"host", "x-original-url", "x-original-method", "x-sent-from", "x-real-ip", "x-forwarded-for",
	"x-auth-request-redirect", "x-forwarded-proto", "x-request-id", "x-forwarded-host", "x-forwarded-port",
	"x-scheme", "connection", "content-length", "upgrade",
}

// TranslateAuth translates an auth-snippet, which ingress-nginx writes in
// the location of the auth subrequest (after the template's
// proxy_set_header list, before proxy_pass): its proxy_set_header of a
// fixed value become headers of the request to the auth service; an
// add_header or expires there does nothing (the location serves only a
// subrequest). Anything else refuses it.
func TranslateAuth(src string) ([]ir.Header, []Verdict, error) {
	ds, err := nginxconf.Parse(src)
	if err != nil {
		return nil, nil, &Refusal{Why: "not nginx syntax: " + err.Error()}
	}
	t := &translator{}
	var out []ir.Header
	for _, d := range ds {
		if err := t.checkArgs(d); err != nil {
			return nil, settle(t.verdicts), err
		}
		switch d.Name {
		case "proxy_set_header":
			if len(d.Args) != 2 {
				return nil, settle(t.verdicts), t.refuse(d, "wrong number of arguments: nginx refuses it")
			}
			if err := t.checkName(d, d.Args[0]); err != nil {
				return nil, settle(t.verdicts), err
			}
			if slices.Contains(authTemplateHeaders, strings.ToLower(d.Args[0])) {
				return nil, settle(t.verdicts), t.refuse(d, "ingress-nginx would send a second %s beside its own to the auth service, which the authorisation service does not", d.Args[0])
			}
			if strings.Contains(d.Args[1], "$") {
				return nil, settle(t.verdicts), t.refuse(d, "a value with variables for the auth service: not translated")
			}
			if d.Args[1] == "" {
				t.verdict(d, NoEffect, "an empty value sends nothing")
				continue
			}
			out = slices.DeleteFunc(out, func(h ir.Header) bool { return strings.EqualFold(h.Name, d.Args[0]) })
			out = append(out, ir.Header{Name: d.Args[0], Value: d.Args[1]})
			t.verdict(d, Translated, "")
		case "add_header", "expires":
			t.verdict(d, NoEffect, "the auth location serves only nginx's subrequest, whose response headers never reach the client")
		default:
			return nil, settle(t.verdicts), t.refuse(d, "in an auth-snippet: not translated")
		}
	}
	slices.SortFunc(out, func(a, b ir.Header) int { return strings.Compare(a.Name, b.Name) })
	return out, settle(t.verdicts), nil
}

package snippet

import (
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
)

// templateVariables are the variables ingress-nginx's template defines or
// sets itself (nginx.tmpl's maps and its locations' set): an http-snippet
// map to one of them would change what the template sends.
var templateVariables = []string{
	"req_id", "connection_upgrade", "pass_access_scheme", "pass_server_port", "best_http_host", "pass_port",
	"proxy_upstream_name", "proxy_alternative_upstream_name", "proxy_host", "namespace", "ingress_name",
	"service_name", "service_port", "location_path", "full_x_forwarded_for", "block_ua", "block_ref",
	"the_real_ip", "forwarded_proto", "forwarded_for",
}

// TranslateHTTP translates the ConfigMap's http-snippet. What people put
// there declares what other configuration uses: zones of limit_req and
// limit_conn, caches, maps and split_clients of variables of their own.
// A declaration alone does nothing; the directives that would use it
// (limit_req, proxy_cache, a variable nobody defines) are refused where
// they appear. So such declarations are of no effect here, and anything
// else (a server, an include, a map over one of the template's own
// variables) refuses the snippet.
func TranslateHTTP(src string) ([]Verdict, error) {
	ds, err := nginxconf.Parse(src)
	if err != nil {
		return nil, &Refusal{Why: "not nginx syntax: " + err.Error()}
	}
	t := &translator{}
	for _, d := range ds {
		if err := t.checkArgs(d); err != nil {
			return settle(t.verdicts), err
		}
		switch d.Name {
		case "limit_req_zone", "limit_conn_zone", "proxy_cache_path":
			if d.Block != nil {
				return settle(t.verdicts), t.refuse(d, "a block: nginx refuses it")
			}
			t.verdict(d, NoEffect, "it declares a zone; a directive that uses it is refused where it appears")
		case "map", "split_clients":
			if d.Block == nil || len(d.Args) != 2 || !strings.HasPrefix(d.Args[1], "$") {
				return settle(t.verdicts), t.refuse(d, "%s takes a value, a $variable and a block", d.Name)
			}
			name := strings.TrimPrefix(d.Args[1], "$")
			for _, v := range templateVariables {
				if name == v {
					return settle(t.verdicts), t.refuse(d, "$%s is ingress-nginx's template's own: defining it changes what the template sends, which is not translated", name)
				}
			}
			t.verdict(d, NoEffect, "it defines $"+name+", which no translated directive reads (one that does is refused where it appears)")
		default:
			return settle(t.verdicts), t.refuse(d, "in an http-snippet: not translated")
		}
	}
	return settle(t.verdicts), nil
}

package annotations

import (
	"fmt"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
)

// ingress-nginx's snippet keys: nginx configuration that
// translate/ingress/snippet translates into policies, or refuses whole
// (translate/ingress/snippets.go applies them).

const snippetDoc = `nginx configuration, translated directive by directive with nginx's semantics where ingress-nginx places it ` +
	`(docs/snippets.md lists each directive and variable with its verdict): header directives, return, rewrite with redirect or break, ` +
	`if and set, allow and deny`

const snippetNote = `A snippet with a directive, argument, variable or context that is not translated whole refuses the Ingress, ` +
	`its Warning naming the directive and its line (serve --unsupported-annotations=ignore serves it without the snippet); ` +
	`what is translated is applied whole. Nothing of the text reaches Envoy. Of 227 real-world snippets ` +
	`(../shared/snippets/corpus.jsonl, TestSnippetCorpus), 158 (70%) are served: 81% of those ingress-nginx's nginx accepts.`

// ConfigurationSnippet lands in each location of the Ingress's paths.
var ConfigurationSnippet = key[string](&definition{
	name:    "configuration-snippet",
	under:   Nginx,
	scope:   ScopeRoute,
	doc:     snippetDoc + ` in each location the Ingress's paths make.`,
	verdict: HonouredWithDifference,
	note:    snippetNote,
}, parseSnippet)

// ServerSnippet lands in the server of each host of the Ingress.
var ServerSnippet = key[string](&definition{
	name:    "server-snippet",
	under:   Nginx,
	scope:   ScopeHost,
	doc:     snippetDoc + `, and location blocks that answer (=, ~, ~* and prefix), in the server of each of the Ingress's hosts.`,
	verdict: HonouredWithDifference,
	note:    snippetNote + ` As in ingress-nginx, a host takes the server-snippet of its oldest Ingress only.`,
}, parseSnippet)

// AuthSnippet lands in the location of auth-url's subrequest.
var AuthSnippet = key[string](&definition{
	name:  "auth-snippet",
	under: Nginx,
	scope: ScopeRoute,
	doc: `nginx configuration in the location of auth-url's subrequest: its proxy_set_header of fixed values are headers of ` +
		`the request to the auth service; add_header and expires there do nothing, as in nginx. Without auth-url it is ignored, ` +
		`as ingress-nginx ignores it (a Warning says so).`,
	verdict: HonouredWithDifference,
	note: `Any other directive, a value with variables, or a header ingress-nginx's template already sends to the auth service ` +
		`refuses the Ingress, its Warning naming the directive and its line.`,
}, parseSnippet)

// parseSnippet bounds a snippet's size; its translation is the group's.
func parseSnippet(s string) (string, error) {
	if len(s) > nginxconf.MaxSize {
		return "", fmt.Errorf("longer than %d bytes", nginxconf.MaxSize)
	}
	return s, nil
}

// snippetKeys lists the keys of this file, for table.
func snippetKeys() []*definition {
	return []*definition{ConfigurationSnippet.def, ServerSnippet.def, AuthSnippet.def}
}

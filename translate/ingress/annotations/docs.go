package annotations

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown is docs/annotations.md: the table, as users read it.
func (r *Registry) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# Annotations\n\n")
	b.WriteString("<!-- Generated from translate/ingress/annotations/keys.go by `make golden`; do not edit. -->\n\n")
	fmt.Fprintf(&b, "ingress-xds reads the annotations below. Each is read under the prefixes shown: `%s/`, "+
		"ingress-nginx's `%s/`, and the legacy `%s/`. Where one annotation is set "+
		"under two prefixes, the first listed wins. A key under one of those prefixes that is not in this table, "+
		"and a value that does not parse, are reported as a Warning Event on the Ingress and otherwise ignored.\n\n",
		OwnPrefix, NginxPrefix, LegacyPrefix)
	// What every route does as ingress-nginx does, without an annotation.
	b.WriteString("Every route, annotated or not, passes a client's `X-Request-ID` to the backend as sent and gives a request " +
		"without one a new one, as ingress-nginx's `$req_id` does (`generate-request-id`, on by default); Envoy's is a UUID " +
		"where nginx's is 32 hexadecimal digits. WebSocket upgrades pass on every route, as through ingress-nginx. " +
		"Every forwarding route retries, as ingress-nginx's default proxy-next-upstream (\"error timeout\", 3 tries) does: a request " +
		"whose connection to an endpoint fails (refused, reset, timed out) is tried on another; POST, LOCK and PATCH only when the " +
		"request was not sent (the connection refused or timed out), as nginx passes none of them on once sent (proxy-next-upstream). " +
		"When no try gets a response, the client gets nginx's status, not Envoy's 503 for every cause: 502 when the connection fails " +
		"(refused, reset or closed before the response, a backend certificate failing proxy-ssl-verify), 504 when connecting times out; " +
		"a Service without a ready endpoint still gets 503, as from ingress-nginx's balancer. A request over a circuit breaker's limit " +
		"(Envoy's overflow, which nginx does not have) keeps Envoy's 503. " +
		"As nginx does before it chooses a location, Envoy resolves /a/../b and merges repeated slashes before it chooses a route, " +
		"so //admin is /admin and meets /admin's access controls; but where nginx then forwards the path as the client sent it " +
		"(and bases its redirects on it), the backend and the redirects here see the normalised path (/a/b// is /a/b/). " +
		"A path with an encoded slash (/admin%2Fx) gets a 307 to the decoded path (serve --escaped-slashes; docs/security.md).\n\n")
	b.WriteString("| annotation | keys | scope | what it does |\n|---|---|---|---|\n")
	for _, d := range r.defs {
		var keys []string
		for _, k := range r.fullKeys(d) {
			keys = append(keys, "`"+k+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", d.name, strings.Join(keys, "<br>"), d.scope, cell(d.doc))
	}

	b.WriteString("\n## ingress-nginx's annotations\n\n")
	fmt.Fprintf(&b, "Every key of ingress-nginx's annotation registry (`docs/user-guide/nginx-configuration/annotations-risk.md` "+
		"of its final release), with what ingress-xds does with it under `%s/`. A key that is not honoured yet is "+
		"reported as a Warning Event (`UnsupportedAnnotation`) and otherwise ignored, unless it guards access: a key that is refused, "+
		"or that guards access and is not honoured yet, or that guards access and whose value does not parse, keeps the Ingress from "+
		"being served (each of its paths answers 503), with a Warning Event (`AnnotationRefused`) naming the key and why; "+
		"`serve --unsupported-annotations=ignore` serves it without a key that is refused or not honoured yet instead (`AnnotationIgnored`), "+
		"never without an access control whose value does not parse.\n\n", NginxPrefix)
	byName := map[string]*definition{}
	for _, d := range r.defs {
		if d.under&Nginx != 0 {
			byName[d.name] = d
			for _, a := range d.aliases {
				byName[a] = d
			}
		}
	}
	counts := map[Verdict]int{}
	var rows strings.Builder
	for _, k := range nginxCatalogue() {
		verdict, note := NotYet, ""
		if d := byName[k.name]; d != nil {
			verdict, note = d.verdictOrDefault(), d.note
		} else if why := r.access[k.name]; why != "" {
			verdict, note = Refused, "Not honoured yet, and "+why+": an Ingress carrying it is not served (see [security.md](security.md))."
		}
		counts[verdict]++
		fmt.Fprintf(&rows, "| `%s` | %s | %s | %s | %s |\n", k.name, k.group, k.risk, verdict, cell(note))
	}
	var summary []string
	for _, v := range []Verdict{Honoured, HonouredWithDifference, Ignored, Refused, NotYet} {
		summary = append(summary, fmt.Sprintf("%s: %d", v, counts[v]))
	}
	fmt.Fprintf(&b, "%d keys; %s.\n\n", len(nginxCatalogue()), strings.Join(summary, ", "))
	b.WriteString("| key | group | risk | verdict | note |\n|---|---|---|---|---|\n")
	b.WriteString(rows.String())
	return b.Bytes()
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

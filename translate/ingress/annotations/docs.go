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
	b.WriteString("| annotation | keys | scope | what it does |\n|---|---|---|---|\n")
	for _, d := range r.defs {
		var keys []string
		for _, k := range r.fullKeys(d) {
			keys = append(keys, "`"+k+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", d.name, strings.Join(keys, "<br>"), d.scope, strings.ReplaceAll(d.doc, "|", `\|`))
	}
	return b.Bytes()
}

package annotations

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ServerAlias gives the Ingress's hosts other names.
var ServerAlias = key[[]string](&definition{
	name:  "server-alias",
	under: Nginx,
	scope: ScopeHost,
	doc: "Comma-separated names that serve exactly what the Ingress's hosts serve, every path of them from every Ingress, " +
		"with their certificate.",
	verdict: HonouredWithDifference,
	note: "exact DNS names only (nginx's regular-expression server names are refused), and not on a wildcard host. " +
		"As in ingress-nginx, the first Ingress of a host to name aliases sets them, and a name that is a host of its own, " +
		"or already another host's alias, is left out.",
}, parseServerAliases)

// parseServerAliases reads "a.example.com, b.example.com": every name must
// be one (ingress-nginx refuses the whole value otherwise), in any case.
func parseServerAliases(s string) ([]string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return nil, fmt.Errorf("%q is not a DNS name", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no name")
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

package ingress

import (
	"maps"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// server-alias, as ingress-nginx's controller applies it: the first Ingress
// (oldest first here) naming aliases for a host sets them, and an alias that
// is a host of its own, the host itself, or already another host's alias is
// left out. Which aliases stand thus depends on the other hosts, so they are
// settled after the merges, for every host that asks for aliases, whenever a
// host changed.

// mergeAliases returns the aliases the host's merge asks for: those of the
// oldest Ingress among frags (oldest first) that routes the host by a rule
// and names aliases. A wildcard host has none.
func mergeAliases(host string, frags []*fragment) []string {
	if host == ir.WildcardHost || strings.HasPrefix(host, "*.") {
		return nil
	}
	for _, f := range frags {
		if len(f.aliases) == 0 || f.canary != nil {
			continue
		}
		for _, hr := range f.routes {
			if hr.host == host {
				return f.aliases
			}
		}
	}
	return nil
}

// settleAliases sets the aliases that stand on the virtual hosts of the
// hosts that ask for some, in host order, marking the hosts whose virtual
// host it replaced as dirty. Virtual hosts are never modified: a host whose
// aliases change gets a new one.
func (m *memo) settleAliases(dirty map[string]bool) {
	if len(m.aliasHosts) == 0 || len(dirty) == 0 {
		return
	}
	taken := map[string]bool{}
	for _, host := range slices.Sorted(maps.Keys(m.aliasHosts)) {
		e := m.hosts[host]
		if e == nil || e.merged == nil || e.merged.vhost == nil {
			continue
		}
		var stand []string
		for _, alias := range e.merged.aliases {
			if alias == host || m.hostNames.members[alias] || taken[alias] {
				continue
			}
			taken[alias] = true
			stand = append(stand, alias)
		}
		if vh := e.merged.vhost; !slices.Equal(vh.Aliases, stand) {
			v := *vh
			v.Aliases = stand
			e.merged.vhost = &v
			dirty[host] = true
		}
	}
}

// parseAliases reads server-alias.
func parseAliases(values *annotations.Values) []string {
	aliases, _ := annotations.ServerAlias.Get(values)
	return aliases
}

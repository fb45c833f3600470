package snippet

import (
	"net/netip"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// accessRule is one allow or deny: the first rule that matches the
// client's address decides (ngx_http_access_module).
type accessRule struct {
	allow bool
	all   bool
	cidr  string
	d     nginxconf.Directive
}

func (t *translator) accessRule(d nginxconf.Directive) (accessRule, error) {
	if len(d.Args) != 1 {
		return accessRule{}, t.refuse(d, "wrong number of arguments: nginx refuses it")
	}
	r := accessRule{allow: d.Name == "allow", d: d}
	a := d.Args[0]
	switch {
	case a == "all":
		r.all = true
	case a == "unix:":
		return accessRule{}, t.refuse(d, "unix: sockets: not translated")
	default:
		if p, err := netip.ParsePrefix(a); err == nil {
			r.cidr = p.Masked().String()
		} else if ip, err := netip.ParseAddr(a); err == nil {
			r.cidr = netip.PrefixFrom(ip, ip.BitLen()).String()
		} else {
			return accessRule{}, t.refuse(d, "%q is neither an address, a CIDR range nor all: nginx refuses it", a)
		}
	}
	t.verdict(d, Translated, "")
	return r, nil
}

// ipRules is an ordered list of allow and deny as the IR's rules: denied
// ranges, then allowed ones (when there are, any other address is
// refused). The orders nginx's first match gives that shape are
// translated: denies, then allows, then deny all; or denies then allow
// all (or nothing: nginx allows what no rule matched). Another order is
// refused rather than approximated.
func (t *translator) ipRules(rules []accessRule) (*ir.IPRules, error) {
	out := &ir.IPRules{}
	i := 0
	for ; i < len(rules) && !rules[i].allow; i++ {
		if rules[i].all {
			// deny all: nothing after it matters.
			out.Deny = append(out.Deny, "0.0.0.0/0", "::/0")
			return out, nil
		}
		out.Deny = append(out.Deny, rules[i].cidr)
	}
	for ; i < len(rules) && rules[i].allow; i++ {
		if rules[i].all {
			// allow all: what follows never matches, and only the
			// denies before it are left.
			if len(out.Deny) == 0 {
				return nil, nil
			}
			return &ir.IPRules{Deny: out.Deny}, nil
		}
		out.Allow = append(out.Allow, rules[i].cidr)
	}
	switch {
	case i == len(rules) && len(out.Allow) > 0:
		// Allows without a deny all: nginx lets every address in.
		out.Allow = nil
	case i == len(rules):
	case rules[i].all && !rules[i].allow:
		if len(out.Allow) == 0 {
			out.Deny = append(out.Deny, "0.0.0.0/0", "::/0")
		}
	default:
		return nil, t.refuse(rules[i].d, "allow and deny in this order (a deny after an allow, other than deny all): not translated")
	}
	if len(out.Allow) == 0 && len(out.Deny) == 0 {
		return nil, nil
	}
	return out, nil
}

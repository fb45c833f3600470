package annotations

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// parseCIDRs reads ingress-nginx's source ranges: CIDRs and single
// addresses, IPv4 or IPv6, comma separated, spaces around each ignored (its
// net.ParseIPNets). A CIDR with host bits set means its network, as Go's
// net.ParseCIDR (which ingress-nginx uses) reads it: "10.0.0.1/8" is
// 10.0.0.0/8. An empty entry, or an empty value, is an error, as it is to
// ingress-nginx. The result is canonical CIDRs ("10.0.0.1" is
// "10.0.0.1/32"), sorted, without duplicates; an IPv4-mapped IPv6 address
// is the IPv4 address, as net.ParseIP reads it.
func parseCIDRs(s string) ([]string, error) {
	var out []string
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		p, err := parseRange(entry)
		if err != nil {
			return nil, err
		}
		out = append(out, p.String())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseRange reads one CIDR or address.
func parseRange(entry string) (netip.Prefix, error) {
	if entry == "" {
		return netip.Prefix{}, fmt.Errorf("an empty entry: want CIDRs or addresses, comma separated (such as 10.0.0.0/8, 192.168.1.1)")
	}
	if strings.Contains(entry, "%") {
		// netip reads a zone (fe80::1%eth0); a range has none.
		return netip.Prefix{}, fmt.Errorf("%q: an address with a zone is not a range", entry)
	}
	if !strings.Contains(entry, "/") {
		a, err := netip.ParseAddr(entry)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR nor an address", entry)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(entry)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR nor an address", entry)
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

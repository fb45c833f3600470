package kube

import (
	"fmt"
	"net"
	"net/netip"
)

// AddressPolicy says which addresses an ExternalName Service may send
// traffic to. An Ingress's author chooses the name, and a name can resolve
// to anything: to the proxy's own loopback (its admin interface, the
// control plane, any local listener), to the node's own addresses, to the
// cloud's metadata service on 169.254.169.254. None of those is ever sent
// to unless the operator allows local addresses.
type AddressPolicy struct {
	// AllowLocal lets loopback, link-local, unspecified and own addresses
	// through (serve --external-name-allow-local).
	AllowLocal bool
	// Own lists the node's own addresses; nil: this host's interfaces
	// (Envoy runs beside the control plane, or on a node whose addresses
	// the caller adds).
	Own func() []netip.Addr
}

// Resolution is what the control plane's resolver found for an
// ExternalName Service's name: its verdict. The addresses themselves are
// the Service's endpoints (Source.EndpointSlices), so that a changed answer
// takes the endpoint fast path; a changed verdict is a new Service.
type Resolution struct {
	// Refused, when set, says why the name is not sent to: it resolves to
	// an address the policy refuses.
	Refused string
	// Err, when set, says why the name has no addresses (not resolved
	// yet, or the lookup failed before any answer).
	Err string
}

// check returns why addrs must not be sent to ("" when they may). One
// refused address refuses the name: a name that resolves partly to
// loopback is an attack, not a mistake.
func (p AddressPolicy) check(addrs []netip.Addr) string {
	var own []netip.Addr
	if !p.AllowLocal {
		own = p.own()
	}
	for _, a := range addrs {
		if why := p.refuses(a.Unmap(), own); why != "" {
			return fmt.Sprintf("resolves to %s, %s", a, why)
		}
	}
	return ""
}

func (p AddressPolicy) refuses(a netip.Addr, own []netip.Addr) string {
	switch {
	case a.IsMulticast() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "not a unicast address"
	case p.AllowLocal:
		return ""
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified():
		return "the unspecified address (this host)"
	case a.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata services live there)"
	}
	for _, o := range own {
		if a == o {
			return "an address of this node"
		}
	}
	return ""
}

func (p AddressPolicy) own() []netip.Addr {
	if p.Own != nil {
		return p.Own()
	}
	return InterfaceAddresses()
}

// InterfaceAddresses lists the addresses of this host's interfaces.
func InterfaceAddresses() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}

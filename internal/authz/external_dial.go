package authz

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// addressGuard refuses the addresses an auth-url must never reach, checked
// on the address actually dialled (after DNS, so a name re-pointed at
// loopback is refused too): loopback (Envoy's admin interface and this
// service share the pod's), link-local (cloud metadata at 169.254.169.254),
// unspecified and multicast, and the host's own addresses.
type addressGuard struct {
	own map[netip.Addr]bool
}

// newAddressGuard reads the host's own addresses once.
func newAddressGuard() *addressGuard {
	g := &addressGuard{own: map[netip.Addr]bool{}}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return g
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			g.own[p.Addr().Unmap()] = true
		}
	}
	return g
}

func (g *addressGuard) refused(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || g.own[a]
}

// dialer connects to auth-url hosts, refusing what the guard refuses (nil:
// refuse nothing, for tests on loopback).
func dialer(g *addressGuard) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{
		// nginx's proxy_connect_timeout default.
		Timeout:   5 * time.Second,
		KeepAlive: 30 * time.Second,
	}
	if g != nil {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("auth-url address %q: %w", address, err)
			}
			if g.refused(ap.Addr()) {
				return fmt.Errorf("auth-url address %s is loopback, link-local, unspecified, multicast or this host's own: refused", ap.Addr())
			}
			return nil
		}
	}
	return d.DialContext
}

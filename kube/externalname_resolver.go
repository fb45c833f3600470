package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"time"

	"github.com/miekg/dns"
)

// Resolver looks up the addresses of an ExternalName Service's name, and
// for how long the answer holds (0: it cannot say; the caller then uses a
// bounded interval of its own).
type Resolver interface {
	Lookup(ctx context.Context, name string) ([]netip.Addr, time.Duration, error)
}

// SystemResolver resolves as the process does (Go's resolver: /etc/hosts,
// then the servers of /etc/resolv.conf). Go's resolver does not give the
// records' TTL, so its answers are looked up again on the caller's interval.
type SystemResolver struct{ Resolver *net.Resolver }

// Lookup implements Resolver.
func (r SystemResolver) Lookup(ctx context.Context, name string) ([]netip.Addr, time.Duration, error) {
	res := r.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	addrs, err := res.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, 0, fmt.Errorf("resolving %s: %w", name, err)
	}
	return addrs, 0, nil
}

// DNSResolver asks one DNS server for a name's A and AAAA records and
// follows their TTL: the smallest TTL of the answers, CNAMEs included.
type DNSResolver struct {
	// Server is host:port of the DNS server.
	Server string
	// Timeout bounds each query; 2 s when zero.
	Timeout time.Duration
}

// Lookup implements Resolver.
func (r DNSResolver) Lookup(ctx context.Context, name string) ([]netip.Addr, time.Duration, error) {
	client := &dns.Client{Timeout: r.Timeout}
	if client.Timeout == 0 {
		client.Timeout = 2 * time.Second
	}
	var addrs []netip.Addr
	var ttl uint32
	first := true
	var errs []error
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		q := new(dns.Msg)
		q.SetQuestion(dns.Fqdn(name), qtype)
		q.RecursionDesired = true
		answer, _, err := client.ExchangeContext(ctx, q, r.Server)
		if err != nil {
			errs = append(errs, fmt.Errorf("asking %s for %s %s: %w", r.Server, dns.TypeToString[qtype], name, err))
			continue
		}
		if answer.Rcode != dns.RcodeSuccess {
			errs = append(errs, fmt.Errorf("%s answered %s for %s %s", r.Server, dns.RcodeToString[answer.Rcode], dns.TypeToString[qtype], name))
			continue
		}
		for _, rr := range answer.Answer {
			var ip net.IP
			switch rec := rr.(type) {
			case *dns.A:
				ip = rec.A
			case *dns.AAAA:
				ip = rec.AAAA
			case *dns.CNAME:
			default:
				continue
			}
			if first || rr.Header().Ttl < ttl {
				ttl, first = rr.Header().Ttl, false
			}
			if ip == nil {
				continue
			}
			if a, ok := netip.AddrFromSlice(ip); ok {
				addrs = append(addrs, a.Unmap())
			}
		}
	}
	if len(addrs) == 0 {
		if len(errs) == 0 {
			errs = append(errs, fmt.Errorf("%s has no A or AAAA record at %s", name, r.Server))
		}
		return nil, 0, errors.Join(errs...)
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	return slices.Compact(addrs), time.Duration(ttl) * time.Second, nil
}

package framework

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// DNS is a real DNS server on loopback (UDP) whose A and AAAA records a
// test sets and changes, for what resolves names (ExternalName Services).
// A name it has no record of is NXDOMAIN.
type DNS struct {
	// Address is 127.0.0.1:port.
	Address string
	// TTL is the TTL of every answer, in seconds.
	TTL uint32

	mu      sync.Mutex
	records map[string][]string
}

// StartDNS starts a DNS server, stopped when the test ends.
func StartDNS(t testing.TB, ttl uint32) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{Address: pc.LocalAddr().String(), TTL: ttl, records: map[string][]string{}}
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve)}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return d
}

// Set makes name resolve to addrs (none: no address, but the name exists).
func (d *DNS) Set(name string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records[strings.ToLower(name)] = addrs
}

// Delete makes name unknown (NXDOMAIN).
func (d *DNS) Delete(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.records, strings.ToLower(name))
}

func (d *DNS) serve(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(r)
	if len(r.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := r.Question[0]
	d.mu.Lock()
	addrs, known := d.records[strings.TrimSuffix(strings.ToLower(q.Name), ".")]
	d.mu.Unlock()
	if !known {
		m.Rcode = dns.RcodeNameError
	}
	for _, a := range addrs {
		ip := net.ParseIP(a)
		hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: d.TTL}
		switch {
		case ip == nil:
		case ip.To4() != nil && q.Qtype == dns.TypeA:
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: ip.To4()})
		case ip.To4() == nil && q.Qtype == dns.TypeAAAA:
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: ip})
		}
	}
	_ = w.WriteMsg(m)
}

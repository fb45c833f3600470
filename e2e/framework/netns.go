package framework

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Netns is a network namespace joined to the test's namespace by a veth
// pair. Its address comes from 198.18.0.0/15 (benchmarking space): the API
// server refuses loopback addresses in EndpointSlices, so backends that
// Kubernetes objects point at must live on an address like this.
type Netns struct {
	Name   string
	HostIP string // the test's end of the veth pair
	IP     string // the namespace's end, where its servers listen
}

// NewNetns creates a network namespace, deleted when the test ends. It needs
// root and the ip command; without them the test is skipped, saying so.
func NewNetns(t testing.TB) *Netns {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command (iproute2) to create a network namespace")
	}
	id := randomHex(t, 4)
	// Interface names are limited to 15 bytes; a random /30 keeps parallel
	// runs (other tests, other people's runs) from clashing.
	host, peer := subnet(t)
	n := &Netns{Name: "ixds-e2e-" + id, HostIP: host.String(), IP: peer.String()}
	hostIf, peerIf := "ixh"+id, "ixp"+id
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", n.Name)
	t.Cleanup(func() {
		// Deleting the namespace deletes the veth pair with it.
		if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v\n%s", n.Name, err, out)
		}
	})
	run("link", "add", hostIf, "type", "veth", "peer", "name", peerIf)
	t.Cleanup(func() { exec.Command("ip", "link", "del", hostIf).Run() }) // in case the move failed
	run("link", "set", peerIf, "netns", n.Name)
	run("addr", "add", n.HostIP+"/30", "dev", hostIf)
	run("link", "set", hostIf, "up")
	run("-n", n.Name, "addr", "add", n.IP+"/30", "dev", peerIf)
	run("-n", n.Name, "link", "set", peerIf, "up")
	run("-n", n.Name, "link", "set", "lo", "up")
	t.Logf("network namespace %s: %s (here) <-> %s (there)", n.Name, n.HostIP, n.IP)
	return n
}

// Command returns a command that runs name inside the namespace.
func (n *Netns) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// subnet picks a random /30 in 198.18.0.0/15 and returns its two usable
// addresses.
func subnet(t testing.TB) (netip.Addr, netip.Addr) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	base := netip.MustParseAddr("198.18.0.0").As4()
	offset := binary.BigEndian.Uint32(b[:]) % (1 << 15) * 4 // 2^15 /30s in a /15
	addr := binary.BigEndian.Uint32(base[:]) + offset
	var host, peer [4]byte
	binary.BigEndian.PutUint32(host[:], addr+1)
	binary.BigEndian.PutUint32(peer[:], addr+2)
	return netip.AddrFrom4(host), netip.AddrFrom4(peer)
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

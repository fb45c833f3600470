package framework

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Netns is a network namespace joined to the caller's namespace by a veth
// pair. Its address comes from 198.18.0.0/16 (benchmarking space): the API
// server refuses loopback addresses in EndpointSlices, so backends that
// Kubernetes objects point at must live on an address like this.
type Netns struct {
	Name   string
	HostIP string // the caller's end of the veth pair
	IP     string // the namespace's end, where its servers listen
}

// NewNetns creates a network namespace, deleted when the test ends. It needs
// root and the ip command; without them the test is skipped, saying so.
func NewNetns(t testing.TB) *Netns {
	t.Helper()
	if err := CanCreateNetns(); err != nil {
		t.Skip(err)
	}
	n, err := CreateNetns("ixds-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Delete(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("network namespace %s: %s (here) <-> %s (there)", n.Name, n.HostIP, n.IP)
	return n
}

// CanCreateNetns says why CreateNetns cannot work here, if it cannot.
func CanCreateNetns() error {
	if os.Geteuid() != 0 {
		return errors.New("creating a network namespace needs root (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("creating a network namespace needs the ip command (iproute2)")
	}
	return nil
}

// CreateNetns creates a network namespace named prefix plus a random id,
// and its veth pair, for callers that are not tests (the load command).
// Delete removes both.
func CreateNetns(prefix string) (*Netns, error) {
	if err := CanCreateNetns(); err != nil {
		return nil, err
	}
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	id := hex.EncodeToString(b[:])
	// A random /30 keeps parallel runs (other tests, other people's runs)
	// from clashing; interface names are limited to 15 bytes.
	host, peer := subnet()
	n := &Netns{Name: prefix + id, HostIP: host.String(), IP: peer.String()}
	hostIf, peerIf := "ixh"+id, "ixp"+id
	if err := ip("netns", "add", n.Name); err != nil {
		return nil, err
	}
	for _, args := range [][]string{
		{"link", "add", hostIf, "type", "veth", "peer", "name", peerIf},
		{"link", "set", peerIf, "netns", n.Name},
		{"addr", "add", n.HostIP + "/30", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"-n", n.Name, "addr", "add", n.IP + "/30", "dev", peerIf},
		{"-n", n.Name, "link", "set", peerIf, "up"},
		{"-n", n.Name, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			exec.Command("ip", "link", "del", hostIf).Run() // in case the move failed
			return nil, errors.Join(err, n.Delete())
		}
	}
	return n, nil
}

// Delete deletes the namespace, and the veth pair with it.
func (n *Netns) Delete() error {
	return ip("netns", "del", n.Name)
}

// Command returns a command that runs name inside the namespace.
func (n *Netns) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// subnet picks a random /30 in 198.18.0.0/16 and returns its two usable
// addresses. The other half of the benchmarking space, 198.19.0.0/16, is the
// kind cluster's (docker bridge, kind network, pods, Services: docs/kind.md),
// so that the two suites can run at once.
func subnet() (netip.Addr, netip.Addr) {
	var b [4]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	base := netip.MustParseAddr("198.18.0.0").As4()
	offset := binary.BigEndian.Uint32(b[:]) % (1 << 14) * 4 // 2^14 /30s in a /16
	addr := binary.BigEndian.Uint32(base[:]) + offset
	var host, peer [4]byte
	binary.BigEndian.PutUint32(host[:], addr+1)
	binary.BigEndian.PutUint32(peer[:], addr+2)
	return netip.AddrFrom4(host), netip.AddrFrom4(peer)
}

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

package framework

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/ports"
)

// Netns is a network namespace joined to the caller's namespace by a veth
// pair. Its address comes from 198.18.0.0/16 (benchmarking space): the API
// server refuses loopback addresses in EndpointSlices, so backends that
// Kubernetes objects point at must live on an address like this.
type Netns struct {
	Name   string
	HostIP string // the caller's end of the veth pair
	IP     string // the namespace's end, where its servers listen

	hostIf string             // the caller's end's interface
	subnet *ports.Reservation // its /30, until Delete
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
	// The /30 is reserved across the test processes `go test ./...` runs
	// side by side (two namespaces on one subnet would each route to
	// whichever veth the kernel picks); interface names are limited to 15
	// bytes.
	reg, err := ports.OpenSlots("subnets", subnets, subnetUnused)
	if err != nil {
		return nil, err
	}
	res, err := reg.Reserve(1)
	if err != nil {
		return nil, fmt.Errorf("reserving a subnet for a network namespace: %w", err)
	}
	host, peer := subnet(res.Ports[0])
	hostIf, peerIf := "ixh"+id, "ixp"+id
	n := &Netns{Name: prefix + id, HostIP: host.String(), IP: peer.String(), hostIf: hostIf, subnet: res}
	if err := ip("netns", "add", n.Name); err != nil {
		return nil, errors.Join(err, res.Release())
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
			exec.Command("ip", "link", "del", hostIf).Run() // if it was made: the pair goes with it
			return nil, errors.Join(err, ip("netns", "del", n.Name), res.Release())
		}
	}
	return n, nil
}

// Delete deletes the veth pair and the namespace, and gives its subnet
// back. The pair goes first, by name: deleting the namespace alone
// removes it only later, when the kernel tears the namespace down, and
// until then its address keeps the subnet from being handed out again.
func (n *Netns) Delete() error {
	if err := ip("link", "del", n.hostIf); err != nil {
		return err // the subnet stays reserved until this process exits
	}
	if err := ip("netns", "del", n.Name); err != nil {
		return err
	}
	return n.subnet.Release()
}

// Command returns a command that runs name inside the namespace.
func (n *Netns) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// subnets is how many /30 subnets 198.18.0.0/16 holds. The other half of
// the benchmarking space, 198.19.0.0/16, is the kind cluster's (docker
// bridge, kind network, pods, Services: docs/kind.md), so that the two
// suites can run at once.
const subnets = 1 << 14

// subnet returns the two usable addresses of the i-th /30 of
// 198.18.0.0/16.
func subnet(i int) (host, peer netip.Addr) {
	base := netip.MustParseAddr("198.18.0.0").As4()
	addr := binary.BigEndian.Uint32(base[:]) + uint32(i%subnets)*4
	var h, p [4]byte
	binary.BigEndian.PutUint32(h[:], addr+1)
	binary.BigEndian.PutUint32(p[:], addr+2)
	return netip.AddrFrom4(h), netip.AddrFrom4(p)
}

// subnetUnused says whether no interface here has an address in the i-th
// /30: a namespace that a killed run left behind keeps its host end.
func subnetUnused(i int) bool {
	host, _ := subnet(i)
	prefix := netip.PrefixFrom(host, 30).Masked()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok {
			if addr, ok := netip.AddrFromSlice(ipnet.IP); ok && prefix.Contains(addr.Unmap()) {
				return false
			}
		}
	}
	return true
}

func ip(args ...string) error {
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

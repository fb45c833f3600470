package load

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
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// netns is a network namespace joined to this one by a veth pair, with
// addresses from 198.18.0.0/15 (benchmarking space). The API server refuses
// loopback addresses in EndpointSlices, so the backend that Envoy reaches
// through an EndpointSlice lives there. This is e2e/framework's Netns
// without the testing.TB: the load command is no test.
type netns struct {
	name   string
	hostIP string // this namespace's end of the veth pair
	ip     string // the other end, where the backend listens
}

// newNetns creates a network namespace and its veth pair. It needs root and
// the ip command (iproute2). Close deletes both.
func newNetns() (*netns, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("creating a network namespace for the backend needs root (ip netns)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, errors.New("creating a network namespace for the backend needs the ip command (iproute2)")
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	id := hex.EncodeToString(b[:4])
	host, peer := subnet(binary.BigEndian.Uint32(b[4:]))
	n := &netns{name: "ixds-load-" + id, hostIP: host.String(), ip: peer.String()}
	// Interface names are limited to 15 bytes; the random /30 keeps this
	// run clear of others (e2e tests, other people's runs).
	hostIf, peerIf := "ilh"+id, "ilp"+id
	if err := ip("netns", "add", n.name); err != nil {
		return nil, err
	}
	steps := [][]string{
		{"link", "add", hostIf, "type", "veth", "peer", "name", peerIf},
		{"link", "set", peerIf, "netns", n.name},
		{"addr", "add", n.hostIP + "/30", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"-n", n.name, "addr", "add", n.ip + "/30", "dev", peerIf},
		{"-n", n.name, "link", "set", peerIf, "up"},
		{"-n", n.name, "link", "set", "lo", "up"},
	}
	for _, args := range steps {
		if err := ip(args...); err != nil {
			exec.Command("ip", "link", "del", hostIf).Run() // in case the move failed
			return nil, errors.Join(err, n.Close())
		}
	}
	return n, nil
}

// Close deletes the namespace, and the veth pair with it.
func (n *netns) Close() error {
	return ip("netns", "del", n.name)
}

// listen opens a TCP listener on address inside the namespace. A socket
// belongs to the namespace of the thread that created it, so a goroutine
// locked to its thread enters the namespace, listens and returns without
// unlocking: Go then ends that thread rather than reuse it. The listener
// and the connections it accepts stay in the namespace whatever thread
// serves them.
func (n *netns) listen(address string) (net.Listener, error) {
	type result struct {
		l   net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(filepath.Join("/var/run/netns", n.name))
		if err != nil {
			done <- result{err: fmt.Errorf("opening network namespace %s: %w", n.name, err)}
			return
		}
		defer f.Close()
		trap := setnsTrap[runtime.GOARCH]
		if trap == 0 {
			done <- result{err: fmt.Errorf("entering a network namespace: setns(2) on %s is not known here", runtime.GOARCH)}
			return
		}
		if _, _, errno := syscall.RawSyscall(trap, f.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			done <- result{err: fmt.Errorf("entering network namespace %s: %w", n.name, errno)}
			return
		}
		l, err := net.Listen("tcp", address)
		done <- result{l: l, err: err}
	}()
	r := <-done
	return r.l, r.err
}

// setnsTrap is the number of setns(2), which the frozen syscall package
// does not name (golang.org/x/sys/unix does, but is no direct dependency of
// this module).
var setnsTrap = map[string]uintptr{"amd64": 308, "arm64": 268}

// subnet picks the /30 numbered r (mod 2^15) in 198.18.0.0/15 and returns
// its two usable addresses.
func subnet(r uint32) (netip.Addr, netip.Addr) {
	base := netip.MustParseAddr("198.18.0.0").As4()
	addr := binary.BigEndian.Uint32(base[:]) + r%(1<<15)*4
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

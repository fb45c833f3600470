package load

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strings"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"sync/atomic"
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

// The backend process: this executable, started inside the namespace with
// these variables set, serves the echo backend instead of doing anything
// else (serveBackendIfAsked runs before main or the tests).
const (
	backendAddressEnv = "INGRESS_LOAD_BACKEND_ADDRESS"
	backendNameEnv    = "INGRESS_LOAD_BACKEND_NAME"
	// backendCountPath answers with the number of other requests served.
	backendCountPath = "/__requests"
)

func init() { serveBackendIfAsked() }

func serveBackendIfAsked() {
	address := os.Getenv(backendAddressEnv)
	if address == "" {
		return
	}
	var served atomic.Int64
	handler := echo.Handler(os.Getenv(backendNameEnv))
	err := http.ListenAndServe(address, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == backendCountPath {
			fmt.Fprintln(w, served.Load())
			return
		}
		served.Add(1)
		handler.ServeHTTP(w, r)
	}))
	fmt.Fprintln(os.Stderr, "backend:", err)
	os.Exit(1)
}

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

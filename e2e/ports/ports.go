// Package ports reserves TCP ports for processes that must be told their
// port up front (Envoy's listeners and admin, the control plane's xDS,
// metrics and authz addresses), safely across the test processes that
// `go test ./...` runs side by side.
//
// Binding 127.0.0.1:0, reading the port and closing the listener is not
// enough: the port is back in the kernel's ephemeral range at once, and
// the next bind(":0") of another test process (or an outgoing connection)
// can be handed it before our process binds it. Two processes told the
// same port then talk to the wrong peer (seen in CI: a control plane's
// HTTP port answered with another test's Envoy admin page).
//
// So ports come from outside the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), which the kernel never hands
// out for bind(0) or outgoing connections; whoever else uses them must ask
// for them by number. Among the processes of this repository, one registry
// decides who has which: a directory under os.TempDir() holding a lock file
// (flock) and one record per reserved port naming the owner's PID and its
// start time. A record whose owner is gone (killed test binary) is
// reclaimed when the port is next considered. Each candidate is also bound
// once, on every address, to skip ports someone outside the registry is
// listening on. A port is never one of the fixed ports the project uses
// elsewhere (excluded).
//
// The same registry hands out other numbers that test processes must not
// share (OpenSlots): the /30 subnets of the network namespaces the tests
// put backends in (framework/netns.go).
//
// Linux only, as the rest of the e2e suite.
package ports

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// excluded (read only) are ports the project's binaries, manifests and docs use by
// default (serve's --http-port 8080 and --xds-address :18000, Envoy's
// admin 9901, the examples' 8000, 8443, 9001-9002, 18080, 18081, 18443,
// ...): a test process must never take one that a developer's demo or
// another suite may bind by number. Most are below the range handed out
// anyway; they are listed so that a machine with another ephemeral range
// cannot bring them back.
var excluded = []int{8000, 8080, 8081, 8443, 9000, 9001, 9002, 9090, 9901, 10000, 10001, 10002, 10003, 10080, 18000, 18080, 18081, 18443}

// Registry is the cross-process record of reserved ports, one directory.
// It holds nothing in memory but where that directory is and which ports
// it may hand out: every Reserve reads the records under the lock, so two
// Registries on one directory (in one process or in two) agree.
type Registry struct {
	dir  string
	pool []portRange // candidate ports, ephemeral and excluded ones left out
	// usable says whether nothing outside the registry uses a candidate
	// now: for ports, that nothing listens on it (bindable).
	usable func(int) bool
}

type portRange struct{ lo, hi int } // inclusive

// Open returns the registry every test process of this repository shares:
// os.TempDir()/ingress-xds-ports-<uid> (one per user: another user's
// directory would not be writable; between users only the bind check
// protects).
func Open() (*Registry, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("ingress-xds-ports-%d", os.Getuid()))
	lo, hi := ephemeralRange()
	return OpenDir(dir, candidates(lo, hi)...)
}

// OpenDir returns the registry in dir handing out ports from pool (first
// and last port of each range, inclusive), with the excluded ones left out.
// Tests give a small pool to make collisions likely if the registry fails.
func OpenDir(dir string, pool ...[2]int) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the port registry: %w", err)
	}
	r := &Registry{dir: dir, usable: bindable}
	for _, p := range pool {
		r.pool = append(r.pool, withoutExcluded(portRange{p[0], p[1]})...)
	}
	if r.size() == 0 {
		return nil, fmt.Errorf("the port registry %s: no port to hand out in %v", dir, pool)
	}
	return r, nil
}

// OpenSlots returns the registry every process of this repository shares
// for slots of one kind (name): numbers from 0 to size-1, each handed out
// when no live process holds it and usable says that nothing outside the
// registry uses it (a namespace left by a killed run, say).
func OpenSlots(name string, size int, usable func(int) bool) (*Registry, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("ingress-xds-%s-%d", name, os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the %s registry: %w", name, err)
	}
	if size <= 0 {
		return nil, fmt.Errorf("the %s registry: no slot to hand out", name)
	}
	return &Registry{dir: dir, pool: []portRange{{0, size - 1}}, usable: usable}, nil
}

// Reservation is ports reserved for this process until Release (or until
// the process exits, after which any Reserve may reclaim them).
type Reservation struct {
	Ports []int
	r     *Registry
	owner string
}

// Reserve reserves n distinct ports that no other process of the registry
// holds and that nothing listens on now.
func (r *Registry) Reserve(n int) (*Reservation, error) {
	owner, err := selfOwner()
	if err != nil {
		return nil, err
	}
	res := &Reservation{r: r, owner: owner}
	err = r.locked(func() error {
		total := r.size()
		start := rand.IntN(total) // spreads processes over the pool: fewer records read
		for k := 0; k < total && len(res.Ports) < n; k++ {
			port := r.at((start + k) % total)
			ok, err := r.take(port, owner)
			if err != nil {
				return err
			}
			if ok {
				res.Ports = append(res.Ports, port)
			}
		}
		if len(res.Ports) < n {
			for _, p := range res.Ports {
				os.Remove(r.record(p))
			}
			return fmt.Errorf("the port registry %s: %d of %d ports free in %v", r.dir, len(res.Ports), n, r.pool)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Release gives the ports back. A record that is no longer this
// reservation's (reclaimed meanwhile) is left alone.
func (res *Reservation) Release() error {
	return res.r.locked(func() error {
		var errs []error
		for _, p := range res.Ports {
			b, err := os.ReadFile(res.r.record(p))
			if err != nil || string(b) != res.owner {
				continue
			}
			if err := os.Remove(res.r.record(p)); err != nil {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
}

// take records port for owner if no live process holds it and it is
// usable now. Called with the lock held.
func (r *Registry) take(port int, owner string) (bool, error) {
	path := r.record(port)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if ownerAlive(string(b)) {
			return false, nil
		}
		// A dead owner's record (or one cut short by a crash, whose writer
		// is dead too: it held the lock): reclaimed.
	case !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("the port registry: %w", err)
	}
	if !r.usable(port) {
		return false, nil
	}
	if err := os.WriteFile(path, []byte(owner), 0o600); err != nil {
		return false, fmt.Errorf("the port registry: %w", err)
	}
	return true, nil
}

// locked runs fn holding the registry's lock: an flock on its lock file,
// which excludes other processes and other open files of this one.
func (r *Registry) locked(fn func() error) error {
	f, err := os.OpenFile(filepath.Join(r.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("the port registry's lock: %w", err)
	}
	defer f.Close() // releases the lock
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("locking the port registry: %w", err)
	}
	return fn()
}

func (r *Registry) record(port int) string { return filepath.Join(r.dir, strconv.Itoa(port)) }

func (r *Registry) size() int {
	n := 0
	for _, p := range r.pool {
		n += p.hi - p.lo + 1
	}
	return n
}

func (r *Registry) at(i int) int {
	for _, p := range r.pool {
		if i <= p.hi-p.lo {
			return p.lo + i
		}
		i -= p.hi - p.lo + 1
	}
	panic("ports: index out of the pool")
}

// bindable reports whether nothing listens on port on any address: the
// wildcard bind conflicts with a listener on 127.0.0.1, 0.0.0.0 or [::].
// Go sets SO_REUSEADDR, so a connection of the port's last user in
// TIME_WAIT does not count, as it does not for Envoy.
func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralRange is the kernel's range for bind(0) and outgoing
// connections; where it cannot be read, 32768-65535 covers Linux's default
// and IANA's.
func ephemeralRange() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			lo, err1 := strconv.Atoi(f[0])
			hi, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && lo <= hi {
				return lo, hi
			}
		}
	}
	return 32768, 65535
}

// candidates are the ports outside [lo, hi]: from 20000 up, clear of the
// project's 1xxxx ports and most services a developer runs; from 1024 up
// when a wide ephemeral range leaves fewer than 1000 there.
func candidates(lo, hi int) [][2]int {
	above := func(from int) [][2]int {
		var out [][2]int
		if from < lo {
			out = append(out, [2]int{from, min(lo-1, 65535)})
		}
		if hi < 65535 {
			out = append(out, [2]int{max(hi+1, from), 65535})
		}
		return out
	}
	preferred := above(20000)
	n := 0
	for _, p := range preferred {
		n += p[1] - p[0] + 1
	}
	if n >= 1000 {
		return preferred
	}
	return above(1024)
}

func withoutExcluded(p portRange) []portRange {
	var out []portRange
	for _, port := range slices.Sorted(slices.Values(excluded)) {
		if port < p.lo || port > p.hi {
			continue
		}
		if port > p.lo {
			out = append(out, portRange{p.lo, port - 1})
		}
		p.lo = port + 1
	}
	if p.lo <= p.hi {
		out = append(out, p)
	}
	return out
}

package ports

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The child side of the tests below: the test binary run again with these
// variables says "ready", waits for a line on its stdin (so that children
// reserve at the same moment), reserves ports in a registry and holds them
// until its stdin closes.
const (
	childDir     = "INGRESS_XDS_PORTS_TEST_DIR"     // the registry's directory
	childPool    = "INGRESS_XDS_PORTS_TEST_POOL"    // ports, comma-separated
	childBatches = "INGRESS_XDS_PORTS_TEST_BATCHES" // how many Reserve calls
	childBatch   = "INGRESS_XDS_PORTS_TEST_BATCH"   // ports per call
)

func TestChildReserver(t *testing.T) {
	dir := os.Getenv(childDir)
	if dir == "" {
		t.Skip("run by the tests of this package in a child process")
	}
	r, err := OpenDir(dir, parsePool(t, os.Getenv(childPool))...)
	if err != nil {
		t.Fatal(err)
	}
	batches, _ := strconv.Atoi(os.Getenv(childBatches))
	batch, _ := strconv.Atoi(os.Getenv(childBatch))
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	for range batches {
		res, err := r.Reserve(batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Ports {
			fmt.Printf("port %d\n", p)
		}
	}
	fmt.Println("held")
	io.Copy(io.Discard, in) // hold until the parent is done
}

type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder // read once the child has exited
	ports  []int
}

// startChild runs a reserver and returns once it is ready to reserve.
func startChild(t *testing.T, dir string, pool []int, batches, batch int) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildReserver$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		childDir+"="+dir, childPool+"="+joinPorts(pool),
		childBatches+"="+strconv.Itoa(batches), childBatch+"="+strconv.Itoa(batch))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout), stderr: &strings.Builder{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	c.wait(t, "ready")
	return c
}

// start tells the child to reserve.
func (c *child) start(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
}

// wait reads the child's output up to the line want, collecting ports.
func (c *child) wait(t *testing.T, want string) {
	t.Helper()
	pid := c.cmd.Process.Pid
	for c.out.Scan() {
		line := c.out.Text()
		if line == want {
			return
		}
		if p, ok := strings.CutPrefix(line, "port "); ok {
			n, err := strconv.Atoi(p)
			if err != nil {
				t.Fatalf("child %d: %q", pid, line)
			}
			c.ports = append(c.ports, n)
			continue
		}
		t.Logf("child %d: %s", pid, line)
	}
	c.cmd.Wait()
	t.Fatalf("child %d ended before %q: %v\n%s", pid, want, c.cmd.ProcessState, c.stderr.String())
}

// reserve starts the children at once and waits until each holds its
// ports.
func reserve(t *testing.T, children ...*child) {
	t.Helper()
	for _, c := range children {
		c.start(t)
	}
	for _, c := range children {
		c.wait(t, "held")
	}
}

// pool reserves n ports in the shared registry for the test and returns
// them, for a registry of the test's own: ports no other test process
// takes meanwhile, and that nothing listened on.
func pool(t *testing.T, n int) []int {
	t.Helper()
	return Take(t, n)
}

func privateRegistry(t *testing.T, ports []int) (*Registry, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := OpenDir(dir, singletons(ports)...)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// Processes reserving many ports at once from one small pool never get
// the same port: without the lock or the records, random starts in 500
// ports would collide many times over.
func TestProcessesNeverShareAPort(t *testing.T) {
	const children, batches, batch = 4, 50, 2
	ports := pool(t, 500)
	_, dir := privateRegistry(t, ports)
	all := make([]*child, children)
	for i := range all {
		all[i] = startChild(t, dir, ports, batches, batch)
	}
	reserve(t, all...)
	owner := map[int]int{}
	for i, c := range all {
		if len(c.ports) != batches*batch {
			t.Errorf("child %d got %d ports, want %d", i, len(c.ports), batches*batch)
		}
		for _, p := range c.ports {
			if j, taken := owner[p]; taken {
				t.Errorf("port %d handed to child %d and child %d", p, j, i)
			}
			owner[p] = i
			if !slices.Contains(ports, p) {
				t.Errorf("port %d is not in the pool", p)
			}
		}
	}
}

// A killed process's reservations are given to the next process that
// asks; while it lives, nobody else gets them.
func TestKilledOwnersPortsAreReclaimed(t *testing.T) {
	ports := pool(t, 3)
	r, dir := privateRegistry(t, ports)
	c := startChild(t, dir, ports, 1, 3)
	reserve(t, c)
	if res, err := r.Reserve(1); err == nil {
		t.Fatalf("got port %v while the child holds the whole pool", res.Ports)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.cmd.Wait()
	res, err := r.Reserve(3)
	if err != nil {
		t.Fatalf("the killed child's ports were not reclaimed: %v", err)
	}
	slices.Sort(res.Ports)
	if !slices.Equal(res.Ports, ports) {
		t.Errorf("reserved %v, want the pool %v", res.Ports, ports)
	}
}

// A record naming this process with another start time (its PID reused
// after the owner died) and a record cut short are reclaimed; one naming
// this process as it is, is not.
func TestRecordsOfNoLiveOwnerAreReclaimed(t *testing.T) {
	self, err := selfOwner()
	if err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(os.Getpid())
	for name, record := range map[string]string{
		"pid reused":  pid + " 1\n",
		"cut short":   pid + " ",
		"empty":       "",
		"no such pid": "2147483647 1\n",
	} {
		t.Run(name, func(t *testing.T) {
			ports := pool(t, 1)
			r, dir := privateRegistry(t, ports)
			writeRecord(t, dir, ports[0], record)
			res, err := r.Reserve(1)
			if err != nil {
				t.Fatalf("record %q kept its port: %v", record, err)
			}
			if got := readRecord(t, dir, ports[0]); got != self {
				t.Errorf("record after reclaiming: %q, want %q", got, self)
			}
			res.Release()
		})
	}
	t.Run("alive", func(t *testing.T) {
		ports := pool(t, 1)
		r, dir := privateRegistry(t, ports)
		writeRecord(t, dir, ports[0], self)
		if res, err := r.Reserve(1); err == nil {
			t.Errorf("got port %v held by a live owner", res.Ports)
		}
	})
}

// Two registries on one directory in one process (two open files of the
// lock) never hand out a port twice, and Release gives ports back.
func TestReserveAndRelease(t *testing.T) {
	ports := pool(t, 4)
	a, dir := privateRegistry(t, ports)
	b, err := OpenDir(dir, singletons(ports)...)
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	second, err := b.Reserve(2)
	if err != nil {
		t.Fatal(err)
	}
	if got := append(slices.Clone(first.Ports), second.Ports...); len(slices.Compact(slices.Sorted(slices.Values(got)))) != 4 {
		t.Fatalf("reservations %v and %v share a port", first.Ports, second.Ports)
	}
	if res, err := a.Reserve(1); err == nil {
		t.Fatalf("got %v from an exhausted pool", res.Ports)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := b.Reserve(2)
	if err != nil {
		t.Fatalf("released ports not given back: %v", err)
	}
	slices.Sort(again.Ports)
	slices.Sort(first.Ports)
	if !slices.Equal(again.Ports, first.Ports) {
		t.Errorf("got %v, want the released %v", again.Ports, first.Ports)
	}
}

// A port something listens on, outside the registry, is skipped.
func TestPortInUseIsSkipped(t *testing.T) {
	ports := pool(t, 2)
	r, _ := privateRegistry(t, ports)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res, err := r.Reserve(1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ports[0] != ports[1] {
		t.Errorf("got %d, want %d (%d is listened on)", res.Ports[0], ports[1], ports[0])
	}
	if res, err := r.Reserve(1); err == nil {
		t.Errorf("got %v: the port listened on was handed out", res.Ports)
	}
}

// The shared registry hands out ports outside the kernel's ephemeral range
// and never one of the project's fixed ports.
func TestSharedRegistryAvoidsEphemeralAndFixedPorts(t *testing.T) {
	lo, hi := ephemeralRange()
	for _, p := range Take(t, 200) {
		if p >= lo && p <= hi {
			t.Errorf("port %d is in the ephemeral range %d-%d", p, lo, hi)
		}
		if slices.Contains(excluded, p) || p < 1024 || p > 65535 {
			t.Errorf("port %d handed out", p)
		}
	}
}

func TestCandidates(t *testing.T) {
	for _, c := range []struct {
		lo, hi int
		want   [][2]int
	}{
		{32768, 60999, [][2]int{{20000, 32767}, {61000, 65535}}},
		{49152, 65535, [][2]int{{20000, 49151}}},
		{20500, 65535, [][2]int{{1024, 20499}}}, // too few left above 20000
		{1024, 65535, nil},
	} {
		if got := candidates(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("candidates(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	if _, err := OpenDir(t.TempDir(), candidates(1024, 65535)...); err == nil {
		t.Error("a registry with no candidate port opened")
	}
	r, err := OpenDir(t.TempDir(), [2]int{8079, 8082}, [2]int{9900, 9901})
	if err != nil {
		t.Fatal(err)
	}
	if want := []portRange{{8079, 8079}, {8082, 8082}, {9900, 9900}}; !slices.Equal(r.pool, want) {
		t.Errorf("pool %v, want %v (8080, 8081 and 9901 excluded)", r.pool, want)
	}
}

func singletons(ports []int) [][2]int {
	out := make([][2]int, len(ports))
	for i, p := range ports {
		out[i] = [2]int{p, p}
	}
	return out
}

func joinPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

func parsePool(t *testing.T, s string) [][2]int {
	var ports []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pool %q: %v", s, err)
		}
		ports = append(ports, p)
	}
	return singletons(ports)
}

func writeRecord(t *testing.T, dir string, port int, record string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(port)), []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readRecord(t *testing.T, dir string, port int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

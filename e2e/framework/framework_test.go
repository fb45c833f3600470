package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestSubnetIsInBenchmarkingSpace(t *testing.T) {
	space := netip.MustParsePrefix("198.18.0.0/16") // 198.19.0.0/16 is the kind cluster's
	seen := map[netip.Addr]bool{}
	for i := range subnets {
		host, peer := subnet(i)
		if seen[host] {
			t.Fatalf("subnet %d: %s is another subnet's", i, host)
		}
		seen[host] = true
		if !space.Contains(host) || !space.Contains(peer) {
			t.Fatalf("%s and %s: not both in %s", host, peer, space)
		}
		// The two usable addresses of one /30.
		network := netip.PrefixFrom(host, 30).Masked().Addr()
		if host != network.Next() || peer != host.Next() {
			t.Fatalf("%s and %s: not the two usable addresses of %s/30", host, peer, network)
		}
	}
}

func TestProcessKeepsOutputAndReportsExit(t *testing.T) {
	p := StartProcess(t, "sh", exec.Command("sh", "-c", "echo one; echo two >&2; exit 3"))
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("sh did not exit")
	}
	var exitErr *exec.ExitError
	if err := p.Exited(); !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("Exited() = %v, want exit status 3", err)
	}
	if got := p.Tail(1); got != "two" {
		t.Errorf("Tail(1) = %q, want %q", got, "two")
	}
	if got := p.Output(); got != "one\ntwo\n" {
		t.Errorf("Output() = %q", got)
	}
	p.Stop() // expected exit: the cleanup must not fail the test
}

func TestExpectNamesTheBackend(t *testing.T) {
	b := StartBackend(t, "coffee")
	addr := LocalAddress(b.Port)
	if err := Expect(addr, "cafe.example.com", "/x", http.StatusOK, "coffee"); err != nil {
		t.Error(err)
	}
	err := Expect(addr, "cafe.example.com", "/x", http.StatusOK, "tea")
	if err == nil || !strings.Contains(err.Error(), `backend "coffee"`) {
		t.Errorf("expecting the wrong backend: got error %v", err)
	}
	s := NewSession(addr)
	defer s.Close()
	for range 3 {
		if err := s.Expect("cafe.example.com", "/", http.StatusOK, "coffee"); err != nil {
			t.Fatal(err)
		}
	}
	if s.Dials() != 1 {
		t.Errorf("a session used %d connections for 3 requests, want 1", s.Dials())
	}
	if b.Requests() != 5 {
		t.Errorf("the backend counted %d requests, want 5", b.Requests())
	}
}

func TestPollReturnsTheLastError(t *testing.T) {
	calls := 0
	_, err := Poll(context.Background(), 50*time.Millisecond, time.Millisecond, func() error { calls++; return errors.New("not yet") })
	if err == nil || err.Error() != "not yet" || calls < 2 {
		t.Errorf("Poll: err %v after %d calls", err, calls)
	}
	took, err := Poll(context.Background(), time.Minute, time.Millisecond, func() error { return nil })
	if err != nil || took > time.Minute {
		t.Errorf("Poll of a true condition: %v after %s", err, took)
	}
}

func TestPollStopsAtAPermanentError(t *testing.T) {
	exited := errors.New("exited")
	calls := 0
	_, err := Poll(context.Background(), 0, time.Millisecond, func() error {
		if calls++; calls == 3 {
			return Permanent(fmt.Errorf("the process: %w", exited))
		}
		return errors.New("not yet")
	})
	if !errors.Is(err, exited) || calls != 3 {
		t.Errorf("Poll: err %v after %d calls, want the permanent error after 3", err, calls)
	}
	if _, ok := errors.AsType[*permanentError](err); ok {
		t.Errorf("Poll returned the Permanent wrapper itself: %#v", err)
	}
}

func TestPollEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Poll(ctx, 0, time.Millisecond, func() error {
		if calls++; calls == 2 {
			cancel()
		}
		return errors.New("not yet")
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "not yet") {
		t.Errorf("Poll after its context ended: %v, want context.Canceled with the last error", err)
	}
}

func TestPollWithATimeoutPassedChecksOnce(t *testing.T) {
	calls := 0
	_, err := Poll(context.Background(), -time.Second, time.Millisecond, func() error { calls++; return errors.New("not yet") })
	if err == nil || calls != 1 {
		t.Errorf("Poll with a timeout already passed: err %v after %d calls, want an error after 1", err, calls)
	}
}

// TestRouteCaseChecksWhatTheBackendSaw sends route cases straight to an
// echo backend, with no Envoy to take the port off the Host: the status and
// backend must match, and so must the Host and path the backend saw.
func TestRouteCaseChecksWhatTheBackendSaw(t *testing.T) {
	addr := LocalAddress(StartBackend(t, "coffee").Port)
	if err := (RouteCase{Host: "cafe.example.com", Path: "/x?size=large", Status: http.StatusOK, Backend: "coffee"}).Send(addr); err != nil {
		t.Errorf("a matching case: %v", err)
	}
	for _, c := range []RouteCase{
		{Host: "cafe.example.com", Path: "/x", Status: http.StatusOK, Backend: "tea"},
		{Host: "cafe.example.com", Path: "/x", Status: http.StatusNotFound, Backend: ""},
		// The backend sees the port, which Envoy would have taken off.
		{Host: "cafe.example.com:8080", Path: "/x", Status: http.StatusOK, Backend: "coffee"},
	} {
		if err := c.Send(addr); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestNetnsHoldsItsSubnet: a namespace's host end is its reserved /30's,
// and makes that subnet look used to the registry even once the
// reservation is gone (a killed run's namespace left behind), until the
// namespace is deleted. (That the registry hands a slot to one process at
// a time is e2e/ports' test.)
func TestNetnsHoldsItsSubnet(t *testing.T) {
	if err := CanCreateNetns(); err != nil {
		t.Skip(err)
	}
	n, err := CreateNetns("ixds-fwt-")
	if err != nil {
		t.Fatal(err)
	}
	i := n.subnet.Ports[0]
	if host, _ := subnet(i); host.String() != n.HostIP {
		t.Fatalf("the namespace's host end is %s, its subnet's %s", n.HostIP, host)
	}
	if subnetUnused(i) {
		t.Errorf("subnet %d (%s) looks unused while %s holds it", i, n.HostIP, n.Name)
	}
	if err := n.Delete(); err != nil {
		t.Fatal(err)
	}
	if !subnetUnused(i) {
		t.Errorf("subnet %d still looks used after its namespace was deleted", i)
	}
}

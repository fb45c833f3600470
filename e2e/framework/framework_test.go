package framework

import (
	"errors"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestSubnetIsInBenchmarkingSpace(t *testing.T) {
	space := netip.MustParsePrefix("198.18.0.0/15")
	for range 1000 {
		host, peer := subnet()
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
	_, err := poll(50*time.Millisecond, func() error { calls++; return errors.New("not yet") })
	if err == nil || err.Error() != "not yet" || calls < 2 {
		t.Errorf("poll: err %v after %d calls", err, calls)
	}
	took, err := poll(time.Second, func() error { return nil })
	if err != nil || took > time.Second {
		t.Errorf("poll of a true condition: %v after %s", err, took)
	}
}

package kube

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/ingress-xds/ingress-xds/e2e/ports"
)

// closedAddress is a loopback address nothing listens on, so that a
// connection to it is refused, reserved for the test in the registry
// every test process shares (e2e/ports): a closed port of 127.0.0.1:0
// could be handed to another test first.
func closedAddress(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports.Take(t, 1)[0]))
}

// serveAt starts an HTTP server answering "up" at addr.
func serveAt(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "up") })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func waitingClient(w *APIServerWait) *http.Client {
	return &http.Client{Transport: w.Wrap(&http.Transport{})}
}

// readLater GETs url through client in the background, under ctx; the
// channel gets the read's error, nil once it is answered.
func readLater(t *testing.T, ctx context.Context, client *http.Client, url string) <-chan error {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errs <- err
	}()
	return errs
}

// A read sent while nothing listens waits, tried again at each interval
// of the clock, and returns the API server's answer once it listens: the
// reflector above it never sees an error, so never backs off.
func TestAPIServerWaitHoldsReadsUntilReachable(t *testing.T) {
	addr := closedAddress(t)
	clock := clocktesting.NewFakeClock(time.Now())
	var logs bytes.Buffer
	w := &APIServerWait{Interval: time.Second, Clock: clock, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	client := waitingClient(w)

	type answer struct {
		body string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := client.Get("http://" + addr + "/api/v1/services")
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{body: string(b), err: err}
	}()
	// Refused twice, each time waiting on the clock.
	for range 2 {
		waitFor(t, "the read waiting on the clock", clock.HasWaiters)
		select {
		case a := <-done:
			t.Fatalf("the read returned while nothing listened: %+v", a)
		default:
		}
		clock.Step(time.Second)
	}
	waitFor(t, "the read waiting on the clock", clock.HasWaiters)
	serveAt(t, addr)
	clock.Step(time.Second)
	a := <-done
	if a.err != nil || a.body != "up" {
		t.Fatalf("after the API server came back: %q, %v; want its answer", a.body, a.err)
	}
	if n := strings.Count(logs.String(), "API server unreachable"); n != 1 {
		t.Errorf("the outage logged %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "API server reachable again") {
		t.Errorf("the API server's return not logged:\n%s", logs.String())
	}
}

// A read that fails otherwise than at its dial (a connection the API
// server closes as it goes down) while others wait for it is not the API
// server answering: the outage is not said to end.
func TestAPIServerWaitOtherErrorsDoNotEndTheOutage(t *testing.T) {
	addr := closedAddress(t)
	hangup, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hangup.Close()
	go func() {
		for {
			c, err := hangup.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	clock := clocktesting.NewFakeClock(time.Now())
	stop := make(chan struct{})
	var logs bytes.Buffer
	w := &APIServerWait{Clock: clock, Stop: stop, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	client := waitingClient(w)

	waited := readLater(t, context.Background(), client, "http://"+addr+"/api/v1/services")
	waitFor(t, "the read waiting on the clock", clock.HasWaiters)
	resp, err := client.Get("http://" + hangup.Addr().String() + "/api/v1/endpoints")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a read over a connection closed at once succeeded")
	}
	close(stop)
	if err := <-waited; err == nil {
		t.Fatal("the waiting read succeeded with nothing listening")
	}
	if strings.Contains(logs.String(), "API server reachable again") {
		t.Errorf("a read's failure ended the outage:\n%s", logs.String())
	}
}

// A write, a read whose context ends, and a read without a context of
// its own once Stop closes (the process shutting down), fail as client-go
// expects.
func TestAPIServerWaitLetsWritesAndDeadlinesFail(t *testing.T) {
	addr := closedAddress(t)
	clock := clocktesting.NewFakeClock(time.Now())
	stop := make(chan struct{})
	client := waitingClient(&APIServerWait{Clock: clock, Stop: stop})

	resp, err := client.Post("http://"+addr+"/api/v1/namespaces/default/events", "application/json", strings.NewReader("{}"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("a write to an unreachable API server succeeded")
	}
	if clock.HasWaiters() {
		t.Error("a write waited for the API server")
	}

	ctx, cancel := context.WithCancel(context.Background())
	failed := readLater(t, ctx, client, "http://"+addr+"/apis/coordination.k8s.io/v1/leases")
	waitFor(t, "the read waiting on the clock", clock.HasWaiters)
	cancel()
	if err := <-failed; err == nil {
		t.Fatal("a read whose context ended succeeded")
	}

	failed = readLater(t, context.Background(), client, "http://"+addr+"/apis/gateway.networking.k8s.io/v1")
	waitFor(t, "the read waiting on the clock", clock.HasWaiters)
	close(stop)
	if err := <-failed; err == nil {
		t.Fatal("a read waiting when Stop closed succeeded")
	}
}

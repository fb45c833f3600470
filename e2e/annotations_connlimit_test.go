package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestLimitConnections checks limit-connections through Envoy and the
// authorisation service that counts for it. Mirrors
// test/e2e/annotations/limitconnections.go: a backend that answers slowly
// (there /sleep/10; here wait=), limit-connections 8, 20 requests at once
// from one client: exactly 8 answered 200 and 12 answered 503, nothing
// else. Here two clients burst at once, each gets its own 8 (the count is
// per address), and an allow-listed one is never counted (nginx's empty
// limit_conn key for limit-allowlist's clients); the count goes back down
// when the requests end, and when a client drops its request mid-way; and
// with the service down, the limited paths (and those it paces,
// limit-rate-after) answer 503, never the backend.
func TestLimitConnections(t *testing.T) {
	backends := echoBackends(t, "alpha")
	alpha := backends[0]
	nsA, nsB, nsC, nsD := framework.NewNetns(t), framework.NewNetns(t), framework.NewNetns(t), framework.NewNetns(t)
	a, b, c, d := nsA.Client(), nsB.Client(), nsC.Client(), nsD.Client()
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", strings.Join([]string{
			accessIngress("pooled", "pooled.example.com", "/", map[string]string{
				nginxKey + "limit-connections": "8",
				nginxKey + "limit-allowlist":   c.IP,
			}),
			// One at a time, for the dropped request.
			accessIngress("single", "single.example.com", "/", map[string]string{nginxKey + "limit-connections": "1"}),
			accessIngress("open", "open.example.com", "/", nil),
			// Paced by the same service (limit-rate-after).
			accessIngress("paced", "paced.example.com", "/", map[string]string{nginxKey + "limit-rate": "64", nginxKey + "limit-rate-after": "64"}),
		}, "")})
	port := fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		if err := expectClient(a, port, "pooled.example.com", "/", http.StatusOK, "alpha"); err != nil {
			return err
		}
		if err := expectClient(a, port, "paced.example.com", "/", http.StatusOK, "alpha"); err != nil {
			return err
		}
		return expectClient(a, port, "single.example.com", "/", http.StatusOK, "alpha")
	})

	t.Run("a burst: 8 in flight per client, the allow-listed never counted", func(t *testing.T) {
		// Each request holds its answer for 3 s: all 20 of a client
		// are in flight at once (the 503s come back at once).
		const n = 20
		counts := slowBurst(t, []*framework.Client{a, b, c}, n, port, "pooled.example.com", "/?wait=3s")
		for i, cl := range []*framework.Client{a, b} {
			if got := counts[i]; got[200] != 8 || got[503] != n-8 || len(got) != 2 {
				t.Errorf("%d requests at once from %s: %v, want exactly 8 served and %d refused with 503", n, cl.IP, got, n-8)
			}
		}
		if got := counts[2]; got[200] != n || len(got) != 1 {
			t.Errorf("%d requests at once from the allow-listed %s: %v, want all served", n, c.IP, got)
		}
		// They ended: the count is back to nothing.
		counts = slowBurst(t, []*framework.Client{a}, 8, port, "pooled.example.com", "/?wait=1s")
		if got := counts[0]; got[200] != 8 || len(got) != 1 {
			t.Errorf("8 requests at once from %s after the burst: %v, want all served", a.IP, got)
		}
	})

	t.Run("a request counts until its response's end", func(t *testing.T) {
		conn, err := nsD.Dial(context.Background(), "tcp", net.JoinHostPort(d.Address, strconv.Itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Headers at once, then a line a second for a minute.
		fmt.Fprintf(conn, "GET /?chunks=60&every=1s HTTP/1.1\r\nHost: single.example.com\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("the trickling response: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the trickling response: %d, want 200", resp.StatusCode)
		}
		// Its headers came, its body has not ended: d's place is taken.
		if err := expectClient(d, port, "single.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			t.Errorf("while d's response trickles: %v", err)
		}
		conn.Close()
		framework.Eventually(t, convergeTimeout, "the place given back when the client went mid-body", func() error {
			return expectClient(d, port, "single.example.com", "/", http.StatusOK, "alpha")
		})
	})

	t.Run("a request dropped before its answer leaves the count", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var conn net.Conn
		// A request whose answer would take a minute, left open; while it
		// is open, d's one place is taken. (Eventually: the request may
		// not have reached the service yet; and had a check below taken
		// d's one place first, the held request itself was refused and
		// has its 503: then it is sent again.)
		framework.Eventually(t, convergeTimeout, "the held request counted", func() error {
			if conn == nil {
				c, err := nsD.Dial(ctx, "tcp", net.JoinHostPort(d.Address, strconv.Itoa(port)))
				if err != nil {
					return err
				}
				fmt.Fprintf(c, "GET /?wait=60s HTTP/1.1\r\nHost: single.example.com\r\n\r\n")
				conn = c
			}
			err := expectClient(d, port, "single.example.com", "/", http.StatusServiceUnavailable, "")
			if err != nil && answered(conn) {
				conn.Close()
				conn = nil
			}
			return err
		})
		// Another client is served beside it.
		if err := expectClient(a, port, "single.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Errorf("another client while d's place is taken: %v", err)
		}
		conn.Close()
		// Without the stream ending on the reset, d would stay refused
		// for the minute the dropped request would have taken.
		framework.Eventually(t, convergeTimeout, "the dropped request's place given back", func() error {
			return expectClient(d, port, "single.example.com", "/", http.StatusOK, "alpha")
		})
	})

	t.Run("the service down: 503, never the backend", func(t *testing.T) {
		fm.cp.Authz.Stop()
		framework.Eventually(t, convergeTimeout, "the limited path refused", func() error {
			return expectClient(a, port, "pooled.example.com", "/", http.StatusServiceUnavailable, "")
		})
		if err := expectClient(a, port, "paced.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			t.Errorf("a path paced by the service, the service down: %v, want 503, never an unpaced answer", err)
		}
		if err := expectClient(a, port, "open.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Errorf("a path without a limit, the service down: %v", err)
		}
	})
}

// slowBurst sends n requests for path at once from each client and counts
// the answers by status (a response read to its end).
func slowBurst(t *testing.T, clients []*framework.Client, n, port int, host, path string) []map[int]int {
	t.Helper()
	counts := make([]map[int]int, len(clients))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range clients {
		counts[i] = map[int]int{}
		for range n {
			wg.Go(func() {
				r, err := c.Get(port, host, path, nil)
				mu.Lock()
				defer mu.Unlock()
				// A slow answer is text, not echo's JSON, which Get
				// reports with the status it read.
				if err != nil && r.Status == 0 {
					t.Errorf("from %s: %v", c.IP, err)
					return
				}
				counts[i][r.Status]++
			})
		}
	}
	wg.Wait()
	return counts
}

// answered says whether conn has had (the start of) a response: a read
// that does not time out at once.
func answered(conn net.Conn) bool {
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	defer conn.SetReadDeadline(time.Time{})
	_, err := conn.Read(make([]byte, 1))
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

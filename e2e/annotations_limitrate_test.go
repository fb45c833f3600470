package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestLimitRate checks limit-rate through Envoy: a response of a known
// size on a paced route takes at least what its size over the rate says,
// after the one second's worth nginx sends at once, and arrives whole; the allow-listed client of limit-allowlist is paced too
// (nginx's allow-list only empties the limit_conn and limit_req keys);
// with limit-rate-after the authorisation service paces, after the amount
// at full speed; limit-rate-after alone does nothing.
// Mirrors test/e2e/annotations/limitrate.go ("Check limit-rate
// annotation", which reads limit_rate 1k and 90k from nginx.conf) with
// the response itself, as nginx's limit_rate
// (ngx_http_write_filter_module) paces it.
func TestLimitRate(t *testing.T) {
	backends := echoBackends(t, "alpha")
	alpha := backends[0]
	a, b := framework.NewNetns(t).Client(), framework.NewNetns(t).Client()
	const kib = 16 // the pace, KiB/s
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", strings.Join([]string{
			accessIngress("paced", "rate.example.com", "/", map[string]string{
				nginxKey + "limit-rate":      strconv.Itoa(kib),
				nginxKey + "limit-rps":       "1000",
				nginxKey + "limit-allowlist": b.IP,
			}),
			accessIngress("full", "full.example.com", "/", nil),
			// Paced by the authorisation service: 32 KiB at once, then
			// nginx's allowance.
			accessIngress("after", "after.example.com", "/", map[string]string{
				nginxKey + "limit-rate":       strconv.Itoa(kib),
				nginxKey + "limit-rate-after": "32",
			}),
			// limit-rate-after alone: nothing (nginx: no rate, no pace).
			accessIngress("lone", "lone.example.com", "/", map[string]string{nginxKey + "limit-rate-after": "32"}),
		}, "")})
	port := fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		for _, h := range []string{"after.example.com", "lone.example.com"} {
			if err := expectClient(a, port, h, "/", http.StatusOK, "alpha"); err != nil {
				return err
			}
		}
		return expectClient(a, port, "rate.example.com", "/", http.StatusOK, "alpha")
	})

	const size = 3 * kib << 10 // three seconds' worth
	// nginx's "+1" second lets the first second's worth go at once (Envoy
	// paces from the first byte, which takes longer): the other two take
	// two seconds at least, less a sixteenth (Envoy's step) for rounding.
	least := time.Duration(float64(size-kib<<10)/float64(kib<<10)*float64(time.Second)) - time.Second/16
	timed := func(c *framework.Client, host string) (time.Duration, int) {
		t.Helper()
		start := time.Now()
		r, err := c.Get(port, host, "/?bytes="+strconv.Itoa(size), nil)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s from %s: %v", host, c.IP, err)
		}
		if r.Status != http.StatusOK {
			t.Fatalf("%s from %s: %d, want 200", host, c.IP, r.Status)
		}
		return took, len(r.Body)
	}
	for _, c := range []*framework.Client{a, b} {
		took, n := timed(c, "rate.example.com")
		t.Logf("paced, from %s: %d bytes in %s (at least %s)", c.IP, n, took, least)
		if n != size {
			t.Errorf("paced, from %s: %d bytes, want %d", c.IP, n, size)
		}
		if took < least {
			t.Errorf("paced at %d KiB/s, from %s: %d bytes in %s, want %s at least", kib, c.IP, n, took, least)
		}
	}
	// With limit-rate-after 32: nginx's allowance at t seconds is
	// 32 KiB + rate*(t+1), so six seconds' worth (96 KiB) takes three
	// seconds at least (less a sixteenth for rounding).
	const afterSize = 6 * kib << 10
	afterLeast := time.Duration(float64(afterSize-32<<10-kib<<10)/float64(kib<<10)*float64(time.Second)) - time.Second/16
	{
		start := time.Now()
		r, err := a.Get(port, "after.example.com", "/?bytes="+strconv.Itoa(afterSize), nil)
		took := time.Since(start)
		t.Logf("paced after 32 KiB: %d bytes in %s (at least %s)", len(r.Body), took, afterLeast)
		if err != nil || r.Status != http.StatusOK || len(r.Body) != afterSize {
			t.Errorf("paced after 32 KiB: %v, %d, %d bytes; want 200 with %d", err, r.Status, len(r.Body), afterSize)
		}
		if took < afterLeast {
			t.Errorf("paced at %d KiB/s after 32 KiB: %d bytes in %s, want %s at least", kib, afterSize, took, afterLeast)
		}
	}
	if _, n := timed(a, "lone.example.com"); n != size {
		t.Errorf("limit-rate-after alone: %d bytes, want %d", n, size)
	}
	// The unpaced host serves the same body whole (no bound on its time:
	// only that it is not cut).
	took, n := timed(a, "full.example.com")
	t.Logf("full speed: %d bytes in %s", n, took)
	if n != size {
		t.Errorf("full speed: %d bytes, want %d", n, size)
	}
}

package e2e

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The client-address keys through a real Envoy, with real clients at
// several addresses: each client is a network namespace of its own (its
// veth pair), and Envoy sees its connections come from that address.

// accessIngress is an Ingress of one host and path to alpha, with
// annotations (full keys).
func accessIngress(name, host, path string, annotations map[string]string) string {
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: default\n", name)
	if len(keys) > 0 {
		b.WriteString("  annotations:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "    %s: %q\n", k, annotations[k])
		}
	}
	fmt.Fprintf(&b, "spec:\n  rules:\n  - host: %s\n    http: {paths: [{path: %s, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}\n", host, path)
	return b.String()
}

const nginxKey = "nginx.ingress.kubernetes.io/"

// TestSourceRanges checks allowlist-source-range and denylist-source-range
// from clients at three addresses, with the client's address its
// connection's peer (serve's default, --trusted-forwarded-hops 0).
func TestSourceRanges(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	a, b, c := framework.NewNetns(t).Client(), framework.NewNetns(t).Client(), framework.NewNetns(t).Client()
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", strings.Join([]string{
			accessIngress("only-a", "allow.example.com", "/admin", map[string]string{nginxKey + "allowlist-source-range": a.IP}),
			// Another Ingress's path on the same host: not guarded.
			accessIngress("open", "allow.example.com", "/", nil),
			accessIngress("not-b", "deny.example.com", "/", map[string]string{nginxKey + "denylist-source-range": b.IP + ", 2001:db8::1"}),
			// Deny before allow: the allow-list covers all three, the
			// deny-list takes b out.
			accessIngress("both", "both.example.com", "/", map[string]string{
				nginxKey + "whitelist-source-range": "198.18.0.0/15",
				nginxKey + "denylist-source-range":  b.IP + "/32",
			}),
			accessIngress("broken", "broken.example.com", "/", map[string]string{nginxKey + "allowlist-source-range": a.IP + ", 10.0.0.0/33"}),
			accessIngress("beside-broken", "broken.example.com", "/other", nil),
		}, "")})
	envoy := fm.envoy
	port := fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		for _, host := range []string{"allow.example.com", "deny.example.com", "both.example.com"} {
			if err := expectClient(a, port, host, "/", http.StatusOK, "alpha"); err != nil {
				return err
			}
		}
		return expectClient(a, port, "broken.example.com", "/other", http.StatusOK, "alpha")
	})

	for _, tc := range []struct {
		// mirrors names the ingress-nginx test (test/e2e/annotations/).
		name, mirrors string
		client        *framework.Client
		host, path    string
		status        int
		backend       string
	}{
		{"an allowed client is served", "ipallowlist.go", a, "allow.example.com", "/admin", 200, "alpha"},
		{"a client not in the allow-list gets 403", "ipallowlist.go", b, "allow.example.com", "/admin", 403, ""},
		{"its neighbour on the same host is open", "ipallowlist.go", b, "allow.example.com", "/", 200, "alpha"},
		// nginx merges slashes before it picks the location: //admin is
		// /admin, never the neighbour /.
		{"a doubled slash does not slip past the allow-list", "ipallowlist.go", b, "allow.example.com", "//admin/x", 403, ""},
		{"a denied client gets 403", "ipdenylist.go", b, "deny.example.com", "/", 403, ""},
		{"any other client is served", "ipdenylist.go", c, "deny.example.com", "/", 200, "alpha"},
		{"deny wins over a broader allow", "ipdenylist.go (with whitelist)", b, "both.example.com", "/", 403, ""},
		{"allowed and not denied", "ipdenylist.go (with whitelist)", c, "both.example.com", "/", 200, "alpha"},
		// ingress-nginx denies a location whose allow-list does not
		// parse (503), rather than serving it open.
		{"a broken allow-list is 503 even for a listed client", "ipallowlist.go", a, "broken.example.com", "/", 503, ""},
		{"the broken Ingress's neighbour is served", "ipallowlist.go", b, "broken.example.com", "/other", 200, "alpha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := expectClient(tc.client, port, tc.host, tc.path, tc.status, tc.backend); err != nil {
				t.Errorf("from %s (mirrors %s): %v", tc.client.IP, tc.mirrors, err)
			}
		})
	}

	// nginx picks the location by the decoded path: /admin%2Fx is under
	// /admin and its allow-list. Envoy routes by the path as sent unless
	// told otherwise, so by default (serve --escaped-slashes=redirect) it
	// sends the client to the decoded path, which is then refused; the
	// neighbour / never sees the request.
	t.Run("an escaped slash does not slip past the allow-list", func(t *testing.T) {
		for _, path := range []string{"/admin%2Fx", "/admin%2fx"} {
			r, err := b.Get(port, "allow.example.com", path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Backend != "" || r.Status != http.StatusTemporaryRedirect {
				t.Errorf("GET %s from %s: %d from backend %q, want Envoy's 307 to the decoded path", path, b.IP, r.Status, r.Backend)
			}
			if loc := r.Header.Get("Location"); !strings.HasSuffix(loc, "/admin/x") {
				t.Errorf("GET %s: Location %q, want the decoded path /admin/x", path, loc)
			}
		}
		if err := expectClient(b, port, "allow.example.com", "/admin/x", http.StatusForbidden, ""); err != nil {
			t.Errorf("the decoded path: %v", err)
		}
	})

	// With no trusted hops, X-Forwarded-For never changes the client's
	// address: b claiming to be a is still b.
	t.Run("a forged X-Forwarded-For is not believed", func(t *testing.T) {
		for _, xff := range []string{a.IP, a.IP + ", " + a.IP, "unknown, " + a.IP} {
			r, err := b.Get(port, "allow.example.com", "/admin", http.Header{"X-Forwarded-For": {xff}})
			if err != nil || r.Status != http.StatusForbidden {
				t.Errorf("from %s with X-Forwarded-For %q: %v %v, want 403", b.IP, xff, r, err)
			}
		}
	})
}

// TestTrustedForwardedHops checks the client address behind a trusted
// proxy (serve --trusted-forwarded-hops 1): the address the proxy appended
// to X-Forwarded-For. It replays ipdenylist.go, which sets
// use-forwarded-headers and sends X-Forwarded-For, with its addresses.
func TestTrustedForwardedHops(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", strings.Join([]string{
		accessIngress("deny", "deny.example.com", "/", map[string]string{nginxKey + "denylist-source-range": "18.0.0.0/8, 56.0.0.1"}),
		accessIngress("both", "both.example.com", "/", map[string]string{
			nginxKey + "denylist-source-range":  "18.1.0.0/16, 56.0.0.0/8",
			nginxKey + "whitelist-source-range": "18.0.0.0/8, 55.0.0.0/8",
		}),
		accessIngress("six", "six.example.com", "/", map[string]string{nginxKey + "allowlist-source-range": "2001:db8::/32"}),
	}, ""))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--trusted-forwarded-hops", "1")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	client := framework.LoopbackClient()
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		return expectForwarded(client, cp.HTTPPort, "deny.example.com", "56.0.0.2", http.StatusOK, "alpha")
	})
	for _, tc := range []struct {
		host, xff string
		status    int
	}{
		// ipdenylist.go "only deny explicitly denied IPs, allow all
		// others".
		{"deny.example.com", "18.0.0.1", 403},
		{"deny.example.com", "56.0.0.1", 403},
		{"deny.example.com", "56.0.0.2", 200},
		// ipdenylist.go "only allow explicitly allowed IPs, deny all
		// others" (deny-list and allow-list).
		{"both.example.com", "18.1.0.1", 403},
		{"both.example.com", "10.10.10.10", 403},
		{"both.example.com", "18.4.0.1", 200},
		{"both.example.com", "55.55.55.55", 200},
		// The proxy appended the client; what the client wrote before
		// it is not believed.
		{"both.example.com", "18.4.0.1, 10.10.10.10", 403},
		{"both.example.com", "10.10.10.10, 18.4.0.1", 200},
		// IPv6 clients.
		{"six.example.com", "2001:db8::1", 200},
		{"six.example.com", "2001:db9::1", 403},
		// No X-Forwarded-For: the peer (127.0.0.1), not in the list.
		{"six.example.com", "", 403},
	} {
		h := http.Header{}
		if tc.xff != "" {
			h.Set("X-Forwarded-For", tc.xff)
		}
		want := "alpha"
		if tc.status != 200 {
			want = ""
		}
		if err := expectClientHeader(client, cp.HTTPPort, tc.host, h, tc.status, want); err != nil {
			t.Errorf("X-Forwarded-For %q: %v", tc.xff, err)
		}
	}
}

// expectClient sends GET host path from c and checks the answer.
func expectClient(c *framework.Client, port int, host, path string, status int, backend string) error {
	r, err := c.Get(port, host, path, nil)
	if err != nil {
		return err
	}
	if r.Status != status || r.Backend != backend {
		return fmt.Errorf("GET %s%s from %s: %s, want %d from %q", host, path, c.IP, r, status, backend)
	}
	return nil
}

// expectForwarded sends GET host / from c as if from xff (one trusted hop).
func expectForwarded(c *framework.Client, port int, host, xff string, status int, backend string) error {
	return expectClientHeader(c, port, host, http.Header{"X-Forwarded-For": {xff}}, status, backend)
}

func expectClientHeader(c *framework.Client, port int, host string, h http.Header, status int, backend string) error {
	r, err := c.Get(port, host, "/", h)
	if err != nil {
		return err
	}
	if r.Status != status || r.Backend != backend {
		return fmt.Errorf("GET %s/ from %s (%v): %s, want %d from %q", host, c.IP, h, r, status, backend)
	}
	return nil
}

// burstFrom sends n requests at once from each client and counts the answers
// by status.
func burstFrom(t *testing.T, clients []*framework.Client, n, port int, host string) []map[int]int {
	t.Helper()
	counts := make([]map[int]int, len(clients))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, c := range clients {
		counts[i] = map[int]int{}
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.Get(port, host, "/", nil)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("from %s: %v", c.IP, err)
					return
				}
				counts[i][r.Status]++
			}()
		}
	}
	wg.Wait()
	return counts
}

// TestRateLimits checks limit-rpm, limit-burst-multiplier and
// limit-allowlist under a burst from four clients at once: each client has
// a bucket of its own (the rate times the multiplier, plus one, as nginx's
// limit_req burst=... nodelay lets through), the allow-listed client is
// never limited, and a refused request gets 503. ingress-nginx has no e2e
// test of limit-rps or limit-rpm; this mirrors its unit tests
// (internal/ingress/annotations/ratelimit/main_test.go, and
// internal/ingress/controller/template/template_test.go's
// TestBuildRateLimit: "limit_req zone=... burst=... nodelay") and
// test/e2e/annotations/limitconnections.go's shape (a burst, counted by
// status).
func TestRateLimits(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta")
	alpha, beta := backends[0], backends[1]
	a, b, c, d := framework.NewNetns(t).Client(), framework.NewNetns(t).Client(), framework.NewNetns(t).Client(), framework.NewNetns(t).Client()
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", strings.Join([]string{
			// One request a minute, bursts of 5 more: a bucket of 6
			// that refills once a minute, longer than the test.
			accessIngress("limited", "limit.example.com", "/", map[string]string{
				nginxKey + "limit-rpm":              "1",
				nginxKey + "limit-burst-multiplier": "5",
				nginxKey + "limit-allowlist":        c.IP + ", 2001:db8::/32",
			}),
			// nginx's limit_req (preaccess phase) comes before allow and
			// deny (access phase): a refused client over its rate gets
			// 503, not 403. A bucket of 1.
			accessIngress("ordered", "ordered.example.com", "/", map[string]string{
				nginxKey + "allowlist-source-range": a.IP,
				nginxKey + "limit-rpm":              "1",
				nginxKey + "limit-burst-multiplier": "0",
			}),
			// A snippet's limit_req_status is the status of the
			// requests the location's limit_req refuses
			// (ngx_http_limit_req_module), in place of the ConfigMap's.
			accessIngress("status", "status.example.com", "/", map[string]string{
				nginxKey + "limit-rpm":              "1",
				nginxKey + "limit-burst-multiplier": "0",
				nginxKey + "configuration-snippet":  "limit_req_status 429;",
			}),
			// A snippet directive that is not translated (limit_conn with
			// a zone of its own) refuses the Ingress, never served
			// without it. (limit-connections: annotations_connlimit_test.go.)
			accessIngress("pooled", "pooled.example.com", "/", map[string]string{nginxKey + "configuration-snippet": "limit_conn addr 1;"}),
		}, "")})
	envoy := fm.envoy
	port := fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	// Converged once pooled answers 503 and ordered 403 to b (its first
	// request on that route; b's token of "ordered" is spent here).
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		if err := expectClient(b, port, "pooled.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			return err
		}
		return expectClient(b, port, "ordered.example.com", "/", http.StatusForbidden, "")
	})

	t.Run("each client has its own bucket, the allow-listed none", func(t *testing.T) {
		const n = 12
		counts := burstFrom(t, []*framework.Client{a, b, c, d}, n, port, "limit.example.com")
		for i, cl := range []*framework.Client{a, b, d} {
			idx := []int{0, 1, 3}[i]
			if got := counts[idx]; got[200] != 6 || got[503] != n-6 {
				t.Errorf("%d requests at once from %s: %v, want 6 served and %d refused with 503", n, cl.IP, got, n-6)
			}
		}
		if got := counts[2]; got[200] != n {
			t.Errorf("%d requests at once from the allow-listed %s: %v, want all served", n, c.IP, got)
		}
	})

	t.Run("a snippet's limit_req_status", func(t *testing.T) {
		if err := expectClient(d, port, "status.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Errorf("first request: %v", err)
		}
		if err := expectClient(d, port, "status.example.com", "/", http.StatusTooManyRequests, ""); err != nil {
			t.Errorf("over its rate: %v, want limit_req_status's 429", err)
		}
	})

	t.Run("the rate limit comes before the source ranges", func(t *testing.T) {
		// b's one token went on the 403 above.
		if err := expectClient(b, port, "ordered.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			t.Errorf("over its rate and not allowed: %v, want 503 as from nginx", err)
		}
		if err := expectClient(a, port, "ordered.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Errorf("allowed, first request: %v", err)
		}
		if err := expectClient(a, port, "ordered.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			t.Errorf("allowed, over its rate: %v", err)
		}
	})

	// The backend's endpoints changing (a rollout, a scale-up) must not
	// hand a limited client a fresh bucket. (A change of the routes
	// does: docs/annotations.md says so.)
	t.Run("a limited client stays limited when the endpoints change", func(t *testing.T) {
		writeManifest(t, fm.dir, "services.yaml", readyServiceYAML("alpha", beta))
		framework.Eventually(t, convergeTimeout, "alpha's endpoint moved to the beta backend", func() error {
			return expectClient(c, port, "limit.example.com", "/", http.StatusOK, "beta")
		})
		if err := expectClient(a, port, "limit.example.com", "/", http.StatusServiceUnavailable, ""); err != nil {
			t.Errorf("after the change: %v, want 503 still", err)
		}
	})
}

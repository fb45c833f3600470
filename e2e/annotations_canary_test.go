package e2e

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// canaryIngressesYAML are the mainline and canary Ingresses of
// ingress-nginx's canary tests (test/e2e/annotations/canary.go), each pair
// on a host of its own: mainline sends /info to the mainline backend, the
// canary the same host and path to the canary backend.
func canaryIngressesYAML() string {
	type pair struct {
		host        string
		annotations string // the canary's, besides canary: "true"
	}
	pairs := []pair{
		{"header.canary.test", `nginx.ingress.kubernetes.io/canary-by-header: CanaryByHeader`},
		{"value.canary.test", `nginx.ingress.kubernetes.io/canary-by-header: CanaryByHeader, nginx.ingress.kubernetes.io/canary-by-header-value: DoCanary, ` +
			`nginx.ingress.kubernetes.io/canary-by-header-pattern: "^Do[A-Z][a-z]+y$"`},
		{"pattern.canary.test", `nginx.ingress.kubernetes.io/canary-by-header: CanaryByHeader, nginx.ingress.kubernetes.io/canary-by-header-pattern: "^Do[A-Z][a-z]+y$"`},
		{"cookie.canary.test", `nginx.ingress.kubernetes.io/canary-by-cookie: CanaryByCookie`},
		{"valuecookie.canary.test", `nginx.ingress.kubernetes.io/canary-by-header: CanaryByHeader, nginx.ingress.kubernetes.io/canary-by-header-value: DoCanary, ` +
			`nginx.ingress.kubernetes.io/canary-by-cookie: CanaryByCookie`},
		{"weight0.canary.test", `nginx.ingress.kubernetes.io/canary-weight: "0"`},
		{"weight100.canary.test", `nginx.ingress.kubernetes.io/canary-weight: "100"`},
		{"total.canary.test", `nginx.ingress.kubernetes.io/canary-weight: "1000", nginx.ingress.kubernetes.io/canary-weight-total: "1000"`},
		{"weight50.canary.test", `nginx.ingress.kubernetes.io/canary-weight: "50"`},
		{"half.canary.test", `nginx.ingress.kubernetes.io/canary-weight: "100", nginx.ingress.kubernetes.io/canary-weight-total: "200"`},
	}
	var b strings.Builder
	for i, p := range pairs {
		fmt.Fprintf(&b, `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: main-%[1]d, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  rules: [{host: %[2]s, http: {paths: [{path: /info, pathType: Prefix, backend: {service: {name: mainline, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: canary-%[1]d
  namespace: default
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/canary: "true", %[3]s}
spec:
  rules: [{host: %[2]s, http: {paths: [{path: /info, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}]}}]
`, i, p.host, p.annotations)
	}
	// A canary with no mainline Ingress: its host and path are not served.
	b.WriteString(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: orphan
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: CanaryByHeader}
spec:
  rules: [{host: orphan.canary.test, http: {paths: [{path: /info, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}]}}]
`)
	return b.String()
}

// TestCanary checks, through a real Envoy, what ingress-nginx's canary
// tests expect: which backend answers for each header, cookie and weight.
func TestCanary(t *testing.T) {
	b := echoBackends(t, "mainline", "canary")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b...)},
		manifest{"canary.yaml", canaryIngressesYAML()})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "canary routes served", func() error {
		return expectFrom(envoy, "header.canary.test", "/info", http.Header{"CanaryByHeader": {"always"}}, "canary")
	})

	for _, tc := range []struct {
		name, host string
		header     http.Header
		want       string // the backend; "" for a 404 from Envoy
	}{
		// "should response with a 200 status from the mainline upstream
		// when requests are made to the mainline ingress"
		{"mainline without a header", "header.canary.test", nil, "mainline"},
		// "when canaried by header with no value": always, never, other.
		{"header always", "header.canary.test", http.Header{"CanaryByHeader": {"always"}}, "canary"},
		{"header never", "header.canary.test", http.Header{"CanaryByHeader": {"never"}}, "mainline"},
		{"header other value", "header.canary.test", http.Header{"CanaryByHeader": {"badheadervalue"}}, "mainline"},
		// "when canaried by header with value": only the value; and
		// "...with value and pattern": the value wins over the pattern.
		{"header value", "value.canary.test", http.Header{"CanaryByHeader": {"DoCanary"}}, "canary"},
		{"header value: always is just another value", "value.canary.test", http.Header{"CanaryByHeader": {"always"}}, "mainline"},
		{"header value: never is just another value", "value.canary.test", http.Header{"CanaryByHeader": {"never"}}, "mainline"},
		{"header value wins over the pattern", "value.canary.test", http.Header{"CanaryByHeader": {"DoCananry"}}, "mainline"},
		// "when canaried by header with value and pattern" (pattern only).
		{"header pattern matches", "pattern.canary.test", http.Header{"CanaryByHeader": {"DoCanary"}}, "canary"},
		{"header pattern does not match", "pattern.canary.test", http.Header{"CanaryByHeader": {"Docanary"}}, "mainline"},
		// "when canaried by cookie respects always and never values".
		{"cookie always", "cookie.canary.test", http.Header{"Cookie": {"CanaryByCookie=always"}}, "canary"},
		{"cookie always among others", "cookie.canary.test", http.Header{"Cookie": {"a=b; CanaryByCookie=always; c=d"}}, "canary"},
		{"cookie never", "cookie.canary.test", http.Header{"Cookie": {"CanaryByCookie=never"}}, "mainline"},
		{"the cookie's name in another case", "cookie.canary.test", http.Header{"Cookie": {"canarybycookie=always"}}, "canary"},
		{"the cookie's value in another case", "cookie.canary.test", http.Header{"Cookie": {"CanaryByCookie=Always"}}, "mainline"},
		{"cookie other value", "cookie.canary.test", http.Header{"Cookie": {"CanaryByCookie=badcookievalue"}}, "mainline"},
		{"another cookie's name ending the same", "cookie.canary.test", http.Header{"Cookie": {"xCanaryByCookie=always"}}, "mainline"},
		// "when canaried by header with value and cookie": a header value
		// that does not match falls through to the cookie.
		{"header value mismatch, cookie always", "valuecookie.canary.test", http.Header{"CanaryByHeader": {"otherheadervalue"}, "Cookie": {"CanaryByCookie=always"}}, "canary"},
		{"header value match, cookie never", "valuecookie.canary.test", http.Header{"CanaryByHeader": {"DoCanary"}, "Cookie": {"CanaryByCookie=never"}}, "canary"},
		// "should return 404 status for requests to the canary if no
		// matching ingress is found".
		{"canary without mainline", "orphan.canary.test", http.Header{"CanaryByHeader": {"always"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := expectFrom(envoy, tc.host, "/info", tc.header, tc.want); err != nil {
				t.Error(err)
			}
		})
	}

	// "when canaried by weight": 0, 100, and the weight equal to the
	// total. Each host is asked enough times that a weight not honoured
	// (half of the requests or so elsewhere) would show.
	for _, tc := range []struct{ name, host, want string }{
		{"should route requests only to mainline if canary weight is 0", "weight0.canary.test", "mainline"},
		{"should route requests only to canary if canary weight is 100", "weight100.canary.test", "canary"},
		{"should route requests only to canary if canary weight is equal to canary weight total", "total.canary.test", "canary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counts := countBackends(t, envoy, tc.host, 50)
			if counts[tc.want] != 50 {
				t.Errorf("%s: %v, want all 50 from %s", tc.host, counts, tc.want)
			}
		})
	}

	// "should route requests split between mainline and canary if canary
	// weight is 50" and "... is 100 and weight total is 200". Each of 400
	// independent requests goes to the canary with probability 1/2, so
	// each backend's count has mean 200 and standard deviation 10: at
	// least 140 each (ingress-nginx asks 40% of 200) fails by chance once
	// in about a billion runs, while a split that is not honoured (0 or
	// 400) always fails.
	for _, host := range []string{"weight50.canary.test", "half.canary.test"} {
		t.Run("split "+host, func(t *testing.T) {
			counts := countBackends(t, envoy, host, 400)
			if counts["mainline"] < 140 || counts["canary"] < 140 {
				t.Errorf("%s: %v of 400, want at least 140 each", host, counts)
			}
		})
	}
}

// expectFrom sends GET host path with header and checks which backend
// answered ("" : a 404 from Envoy itself).
func expectFrom(envoy *framework.Envoy, host, path string, header http.Header, want string) error {
	status, backend, _, err := getWith(envoy, host, path, header)
	if err != nil {
		return err
	}
	if want == "" {
		if status != http.StatusNotFound || backend != "" {
			return fmt.Errorf("GET %s%s %v: %d from %q, want a 404 from Envoy", host, path, header, status, backend)
		}
		return nil
	}
	if status != http.StatusOK || backend != want {
		return fmt.Errorf("GET %s%s %v: %d from %q, want 200 from %s", host, path, header, status, backend, want)
	}
	return nil
}

// countBackends sends n requests to host/info and counts who answered.
func countBackends(t *testing.T, envoy *framework.Envoy, host string, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for range n {
		status, backend, _, err := getWith(envoy, host, "/info", nil)
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusOK {
			t.Fatalf("GET %s/info: status %d from %q", host, status, backend)
		}
		counts[backend]++
	}
	return counts
}

// getWith sends GET path to Envoy's HTTP listener with the given Host and
// headers, on a new connection, and returns the status, the backend that
// answered ("" for Envoy itself) and the response's header.
func getWith(envoy *framework.Envoy, host, path string, header http.Header) (int, string, http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+path, nil)
	if err != nil {
		return 0, "", nil, err
	}
	req.Host = host
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", nil, fmt.Errorf("GET %s%s: %w", host, path, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, "", nil, fmt.Errorf("GET %s%s: reading the body: %w", host, path, err)
	}
	return resp.StatusCode, resp.Header.Get("X-Backend"), resp.Header, nil
}

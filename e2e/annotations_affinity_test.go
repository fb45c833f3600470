package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// stickyServiceYAML is the Service sticky with one endpoint per backend
// (an EndpointSlice each, as each listens on a port of its own).
func stickyServiceYAML(backends ...*framework.Backend) string {
	var b strings.Builder
	b.WriteString("---\napiVersion: v1\nkind: Service\nmetadata: {name: sticky, namespace: default}\nspec:\n  ports: [{port: 80}]\n")
	for _, be := range backends {
		fmt.Fprintf(&b, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: sticky-%[1]s, namespace: default, labels: {kubernetes.io/service-name: sticky}}
addressType: IPv4
ports: [{port: %[3]d}]
endpoints: [{addresses: [%[2]q], conditions: {ready: true}}]
`, be.Name, be.Host, be.Port)
	}
	return b.String()
}

// affinityIngressesYAML are the Ingresses of ingress-nginx's affinity
// tests (test/e2e/annotations/affinity.go, affinitymode.go, and canary.go's
// "canary affinity behavior"), each on a host of its own.
func affinityIngressesYAML() string {
	const sticky = `{service: {name: sticky, port: {number: 80}}}`
	return `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: cookie
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/affinity: cookie
    nginx.ingress.kubernetes.io/affinity-mode: persistent
    nginx.ingress.kubernetes.io/session-cookie-name: SERVERID
    nginx.ingress.kubernetes.io/session-cookie-max-age: "259200"
    nginx.ingress.kubernetes.io/session-cookie-expires: "172800"
    nginx.ingress.kubernetes.io/session-cookie-domain: foo.bar
    nginx.ingress.kubernetes.io/session-cookie-samesite: Lax
spec:
  rules:
  - host: sticky.test
    http:
      paths:
      - {path: /something, pathType: Prefix, backend: ` + sticky + `}
      - {path: /somewhereelse, pathType: Prefix, backend: ` + sticky + `}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules: [{host: sticky.test, http: {paths: [{path: /foo, pathType: Prefix, backend: ` + sticky + `}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: defaults
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-secure: "false"}
spec:
  tls: [{hosts: [defaults.test], secretName: defaults-cert}]
  rules: [{host: defaults.test, http: {paths: [{path: /, pathType: Prefix, backend: ` + sticky + `}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-secure: "true"}
spec:
  rules: [{host: secure.test, http: {paths: [{path: /, pathType: Prefix, backend: ` + sticky + `}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: samesite
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-samesite: None, nginx.ingress.kubernetes.io/session-cookie-conditional-samesite-none: "true"}
spec:
  rules: [{host: samesite.test, http: {paths: [{path: /, pathType: Prefix, backend: ` + sticky + `}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: regex
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/use-regex: "true", nginx.ingress.kubernetes.io/session-cookie-path: /foo/bar}
spec:
  rules: [{host: regex.test, http: {paths: [{path: /foo/.*, pathType: ImplementationSpecific, backend: ` + sticky + `}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: main
  namespace: default
  creationTimestamp: "2026-01-01T00:00:00Z"
  annotations: {nginx.ingress.kubernetes.io/affinity: cookie, nginx.ingress.kubernetes.io/session-cookie-name: aff}
spec:
  rules:
  - {host: canary-sticky.test, http: {paths: [{path: /info, pathType: Prefix, backend: ` + sticky + `}]}}
  - {host: canary-legacy.test, http: {paths: [{path: /info, pathType: Prefix, backend: ` + sticky + `}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: canary-sticky
  namespace: default
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: ForceCanary, nginx.ingress.kubernetes.io/canary-by-header-value: "yes", nginx.ingress.kubernetes.io/canary-weight: "1"}
spec:
  rules: [{host: canary-sticky.test, http: {paths: [{path: /info, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: canary-legacy
  namespace: default
  creationTimestamp: "2026-01-01T00:00:01Z"
  annotations: {nginx.ingress.kubernetes.io/canary: "true", nginx.ingress.kubernetes.io/canary-by-header: ForceCanary, nginx.ingress.kubernetes.io/canary-by-header-value: "yes", nginx.ingress.kubernetes.io/affinity-canary-behavior: legacy}
spec:
  rules: [{host: canary-legacy.test, http: {paths: [{path: /info, pathType: Prefix, backend: {service: {name: canary, port: {number: 80}}}}]}}]
`
}

// TestSessionAffinity checks, through a real Envoy, the Set-Cookie and the
// stickiness ingress-nginx's affinity tests expect.
func TestSessionAffinity(t *testing.T) {
	b := echoBackends(t, "one", "two", "three", "canary")
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "defaults", "defaults.test")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", stickyServiceYAML(b[0], b[1]) + echoServicesYAML(b[3])},
		manifest{"secrets.yaml", tlsSecretYAML("defaults-cert", cert.CertPEM, cert.KeyPEM)},
		manifest{"ingresses.yaml", affinityIngressesYAML()})
	envoy := fm.envoy
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "affinity routes served", func() error {
		_, err := sessionCookie(envoy, "regex.test", "/foo/bar", nil, "INGRESSCOOKIE")
		return err
	})

	t.Run("should set sticky cookie SERVERID, with its attributes", func(t *testing.T) {
		// affinity.go "should set sticky cookie SERVERID", "should set the
		// path to /something on the generated cookie", "should set cookie
		// with expires" (Max-Age; Envoy writes no Expires), "should set
		// cookie with domain"; ingress-nginx's cookie is always HttpOnly.
		c, err := sessionCookie(envoy, "sticky.test", "/something", nil, "SERVERID")
		if err != nil {
			t.Fatal(err)
		}
		if c.Path != "/something" || c.MaxAge != 259200 || c.Domain != "foo.bar" || c.SameSite != http.SameSiteLaxMode || !c.HttpOnly || c.Secure {
			t.Errorf("Set-Cookie %q: want Path=/something, Max-Age=259200, Domain=foo.bar, SameSite=Lax, HttpOnly, not Secure over HTTP", c.Raw)
		}
	})
	t.Run("does not set the path to / on the generated cookie if there's more than one rule referring to the same backend", func(t *testing.T) {
		c, err := sessionCookie(envoy, "sticky.test", "/somewhereelse", nil, "SERVERID")
		if err != nil {
			t.Fatal(err)
		}
		if c.Path != "/somewhereelse" {
			t.Errorf("Set-Cookie %q: want Path=/somewhereelse", c.Raw)
		}
	})
	t.Run("should not set affinity across all server locations when using separate ingresses", func(t *testing.T) {
		_, _, h, err := getWith(envoy, "sticky.test", "/foo", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := h.Values("Set-Cookie"); len(got) != 0 {
			t.Errorf("a path of an Ingress without affinity set %q", got)
		}
	})
	t.Run("should not set cookie without domain annotation; should not set secure in cookie with provided false annotation on http", func(t *testing.T) {
		c, err := sessionCookie(envoy, "defaults.test", "/", nil, "INGRESSCOOKIE")
		if err != nil {
			t.Fatal(err)
		}
		if c.Domain != "" || c.Secure || c.Path != "/" || c.MaxAge != 0 || !c.HttpOnly {
			t.Errorf("Set-Cookie %q: want INGRESSCOOKIE, Path=/, HttpOnly, a session cookie, no Domain, not Secure", c.Raw)
		}
	})
	t.Run("should set secure in cookie with provided false annotation on https", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "HTTPS route served", func() error {
			r, err := framework.GetTLS(envoy.HTTPSAddress, "defaults.test", ca.Pool(), "defaults.test", "/")
			if err != nil {
				return err
			}
			c, err := findCookie(r.Header, "INGRESSCOOKIE")
			if err != nil {
				return err
			}
			if !c.Secure {
				return fmt.Errorf("Set-Cookie %q over HTTPS: want Secure", c.Raw)
			}
			return nil
		})
	})
	t.Run("should set secure in cookie with provided true annotation on http", func(t *testing.T) {
		c, err := sessionCookie(envoy, "secure.test", "/", nil, "INGRESSCOOKIE")
		if err != nil {
			t.Fatal(err)
		}
		if !c.Secure {
			t.Errorf("Set-Cookie %q: want Secure", c.Raw)
		}
	})
	// session-cookie-conditional-samesite-none (no e2e test in
	// ingress-nginx; util/same_site.lua): SameSite=None, but not for the
	// browsers that refuse it.
	t.Run("conditional SameSite=None", func(t *testing.T) {
		for _, tc := range []struct {
			agent string
			none  bool // SameSite=None is sent
		}{
			{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", true},
			{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/51.0.2704.103 Safari/537.36", false},
			{"Mozilla/5.0 (iPhone; CPU iPhone OS 12_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.0 Mobile/15E148 Safari/604.1", false},
			{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Safari/605.1.15", false},
			{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", true},
		} {
			c, err := sessionCookie(envoy, "samesite.test", "/", http.Header{"User-Agent": {tc.agent}}, "INGRESSCOOKIE")
			if err != nil {
				t.Fatal(err)
			}
			if none := c.SameSite == http.SameSiteNoneMode; none != tc.none || !tc.none && strings.Contains(c.Raw, "SameSite") {
				t.Errorf("User-Agent %q: Set-Cookie %q, want SameSite=None %v", tc.agent, c.Raw, tc.none)
			}
		}
	})
	t.Run("should work with use-regex annotation and session-cookie-path", func(t *testing.T) {
		c, err := sessionCookie(envoy, "regex.test", "/foo/bar", nil, "INGRESSCOOKIE")
		if err != nil {
			t.Fatal(err)
		}
		if c.Path != "/foo/bar" {
			t.Errorf("Set-Cookie %q: want Path=/foo/bar", c.Raw)
		}
	})

	// A cookie for each endpoint, from the responses of each: requests
	// without a cookie are balanced round robin, so both answer soon.
	cookies := map[string]*http.Cookie{}
	for i := 0; i < 20 && len(cookies) < 2; i++ {
		_, backend, h, err := getWith(envoy, "sticky.test", "/something", nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := findCookie(h, "SERVERID")
		if err != nil {
			t.Fatal(err)
		}
		cookies[backend] = c
	}
	if cookies["one"] == nil || cookies["two"] == nil {
		t.Fatalf("20 requests without a cookie did not reach both endpoints: %v", cookies)
	}
	sticks := func(t *testing.T, n int) {
		t.Helper()
		for _, want := range []string{"one", "two"} {
			header := http.Header{"Cookie": {"SERVERID=" + cookies[want].Value}}
			for range n {
				status, backend, h, err := getWith(envoy, "sticky.test", "/something", header)
				if err != nil {
					t.Fatal(err)
				}
				if status != http.StatusOK || backend != want {
					t.Fatalf("a request with %s's cookie: %d from %q, want 200 from %s", want, status, backend, want)
				}
				if got := h.Values("Set-Cookie"); len(got) != 0 {
					t.Errorf("a request with a cookie that still holds got a new one: %q", got)
				}
			}
		}
	}
	// affinity.go: a request carrying the cookie reaches the endpoint it
	// names, every time, and is not given another.
	t.Run("a request with the cookie always reaches the same endpoint", func(t *testing.T) { sticks(t, 20) })

	// affinitymode.go "Check persistent affinity mode": with more
	// endpoints, sessions stay where they are.
	t.Run("Check persistent affinity mode", func(t *testing.T) {
		writeManifest(t, fm.dir, "services.yaml", stickyServiceYAML(b[0], b[1], b[2])+echoServicesYAML(b[3]))
		framework.Eventually(t, convergeTimeout, "the third endpoint serves", func() error {
			for range 6 {
				if _, backend, _, err := getWith(envoy, "sticky.test", "/something", nil); err == nil && backend == "three" {
					return nil
				}
			}
			return fmt.Errorf("the third endpoint has not answered yet")
		})
		sticks(t, 20)
	})

	// When the endpoint a cookie names goes, the session moves to another
	// endpoint and the response says which, as nginx picks a new upstream
	// and sets its cookie (sticky.lua balance).
	t.Run("a session whose endpoint is gone moves, with a new cookie", func(t *testing.T) {
		writeManifest(t, fm.dir, "services.yaml", stickyServiceYAML(b[0], b[2])+echoServicesYAML(b[3]))
		header := http.Header{"Cookie": {"SERVERID=" + cookies["two"].Value}}
		framework.Eventually(t, convergeTimeout, "endpoint two gone", func() error {
			status, backend, h, err := getWith(envoy, "sticky.test", "/something", header)
			if err != nil {
				return err
			}
			if status != http.StatusOK || backend == "two" {
				return fmt.Errorf("with two's cookie: %d from %q", status, backend)
			}
			c, err := findCookie(h, "SERVERID")
			if err != nil {
				return err
			}
			// The new cookie keeps the client where it went.
			for range 10 {
				_, again, _, err := getWith(envoy, "sticky.test", "/something", http.Header{"Cookie": {"SERVERID=" + c.Value}})
				if err != nil {
					return err
				}
				if again != backend {
					return fmt.Errorf("the new cookie for %s reached %s", backend, again)
				}
			}
			return nil
		})
	})

	// canary.go "canary affinity behavior": the request the header sends
	// to the canary gets the mainline's session cookie ("sticky", the
	// default), and none with "legacy" ("routes traffic to either
	// mainline or canary backend (legacy behavior)"). That the cookie then
	// keeps the client on the canary whatever the weight is not
	// reproduced (docs/annotations.md, affinity-canary-behavior).
	t.Run("always routes traffic to canary if first request was affinitized to canary (default behavior): the canary sets the cookie", func(t *testing.T) {
		c, err := sessionCookie(envoy, "canary-sticky.test", "/info", http.Header{"ForceCanary": {"yes"}}, "aff")
		if err != nil {
			t.Fatal(err)
		}
		status, backend, _, err := getWith(envoy, "canary-sticky.test", "/info", http.Header{"ForceCanary": {"yes"}, "Cookie": {"aff=" + c.Value}})
		if err != nil || status != http.StatusOK || backend != "canary" {
			t.Errorf("with the canary's cookie and the header: %d from %q (%v), want 200 from canary", status, backend, err)
		}
	})
	t.Run("routes traffic to either mainline or canary backend (legacy behavior): the canary sets no cookie", func(t *testing.T) {
		status, backend, h, err := getWith(envoy, "canary-legacy.test", "/info", http.Header{"ForceCanary": {"yes"}})
		if err != nil || status != http.StatusOK || backend != "canary" {
			t.Fatalf("forced to the canary: %d from %q (%v)", status, backend, err)
		}
		if got := h.Values("Set-Cookie"); len(got) != 0 {
			t.Errorf("legacy: the canary set %q", got)
		}
		if _, err := sessionCookie(envoy, "canary-legacy.test", "/info", nil, "aff"); err != nil {
			t.Errorf("the mainline sets its cookie still: %v", err)
		}
	})
}

// sessionCookie sends GET host path with header over HTTP and returns the
// cookie name the response sets.
func sessionCookie(envoy *framework.Envoy, host, path string, header http.Header, name string) (*http.Cookie, error) {
	status, backend, h, err := getWith(envoy, host, path, header)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK || backend == "" {
		return nil, fmt.Errorf("GET %s%s: %d from %q", host, path, status, backend)
	}
	return findCookie(h, name)
}

// findCookie is the Set-Cookie of name in a response's header.
func findCookie(h http.Header, name string) (*http.Cookie, error) {
	for _, raw := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(raw)
		if err != nil {
			return nil, fmt.Errorf("Set-Cookie %q: %w", raw, err)
		}
		if c.Name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no Set-Cookie for %s in %q", name, h.Values("Set-Cookie"))
}

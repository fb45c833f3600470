package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMap checks serve --configmap through a real Envoy:
// ingress-nginx's controller ConfigMap sets the defaults of the
// annotations (its annotation parsers take the ConfigMap's value as their
// default), an Ingress's own annotation overrides them, a change to the
// ConfigMap takes effect without a restart, and its access controls fail
// closed.
func TestControllerConfigMap(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	secure := ca.Issue(t, "secure", "secure.example.com")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha)+tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM))
	writeManifest(t, dir, "ingresses.yaml", configMapIngressesYAML)
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"proxy-body-size": "1k"}))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	hosts := []string{"plain.example.com", "own.example.com", "allow.example.com"}
	for _, host := range hosts {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	post := func(host string, size int) sent {
		return send(t, envoy, http.MethodPost, host, "/", strings.NewReader(strings.Repeat("x", size)))
	}
	// statuses posts size bytes to each host, in hosts order.
	statuses := func(size int) []int {
		var out []int
		for _, host := range hosts {
			out = append(out, post(host, size).status)
		}
		return out
	}
	until := func(what string, size int, want ...int) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, what, func() error {
			if got := statuses(size); !slices.Equal(got, want) {
				return fmt.Errorf("POST of %d bytes to %v: %v, want %v", size, hosts, got, want)
			}
			return nil
		})
	}

	// annotations/proxy.go "should set valid proxy-body-size" (the
	// annotation) with the ConfigMap's proxy-body-size as the default of
	// the Ingresses that do not set it (nginx's client_max_body_size:
	// a larger body is a 413): own.example.com's annotation says 8k.
	t.Run("the ConfigMap's proxy-body-size is every Ingress's default, and an annotation overrides it", func(t *testing.T) {
		if got := statuses(512); !slices.Equal(got, []int{200, 200, 200}) {
			t.Errorf("512 bytes: %v, want 200 everywhere", got)
		}
		if got := statuses(2048); !slices.Equal(got, []int{413, 200, 413}) {
			t.Errorf("2048 bytes: %v, want 413 but for the host whose annotation allows 8k", got)
		}
	})

	// settings/configmap_change.go "should reload after an update in the
	// configuration": a whitelist-source-range added to the ConfigMap
	// applies to the running Envoy, with no restart; allow.example.com's
	// own allowlist-source-range (the client's 127.0.0.1) overrides it.
	t.Run("a change takes effect without a restart", func(t *testing.T) {
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"proxy-body-size": "4k", "whitelist-source-range": "192.0.2.1/32"}))
		until("the new ConfigMap applied", 2048, 403, 403, 200)
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"proxy-body-size": "4k"}))
		until("the range removed, the new body limit", 2048, 200, 200, 200)
		if got := statuses(5000); !slices.Equal(got, []int{413, 200, 413}) {
			t.Errorf("5000 bytes: %v, want 413 past the ConfigMap's 4k, 200 within the annotation's 8k", got)
		}
	})

	// A whitelist-source-range that does not parse is an access control
	// that cannot be applied: the Ingresses it would apply to are refused
	// (503), never served open; the one with its own range is served.
	t.Run("a range that does not parse fails closed", func(t *testing.T) {
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"whitelist-source-range": "192.0.2.0/33"}))
		until("the refusal", 10, 503, 503, 200)
	})

	// settings/global_access_block.go "should block CIDRs defined in the
	// ConfigMap": the client's address in block-cidrs gets 403, here on
	// every path (allow.example.com's own range included: the stated
	// difference).
	t.Run("block-cidrs refuses a client", func(t *testing.T) {
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"block-cidrs": "192.0.2.0/24, 127.0.0.1"}))
		until("the block", 10, 403, 403, 403)
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"block-cidrs": "192.0.2.0/24"}))
		until("another client blocked", 10, 200, 200, 200)
	})

	// settings/tls.go "should configure HSTS policy header", "setting
	// max-age parameter": with hsts,
	// the HTTPS responses carry Strict-Transport-Security with the
	// ConfigMap's max-age (includeSubDomains by default), the plain-HTTP
	// ones do not; without it, none.
	t.Run("hsts on HTTPS", func(t *testing.T) {
		hstsOf := func() (string, error) {
			r, err := framework.GetTLS(envoy.HTTPSAddress, "secure.example.com", ca.Pool(), "secure.example.com", "/")
			if err != nil {
				return "", err
			}
			if r.Status != http.StatusOK || r.Backend != "alpha" {
				return "", fmt.Errorf("HTTPS: status %d from %q", r.Status, r.Backend)
			}
			return r.Header.Get("Strict-Transport-Security"), nil
		}
		framework.Eventually(t, convergeTimeout, "secure.example.com over HTTPS", func() error {
			_, err := hstsOf()
			return err
		})
		if v, _ := hstsOf(); v != "" {
			t.Errorf("Strict-Transport-Security %q without hsts", v)
		}
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"hsts": "true", "hsts-max-age": "600"}))
		framework.Eventually(t, convergeTimeout, "the HSTS header", func() error {
			if v, err := hstsOf(); err != nil || v != "max-age=600; includeSubDomains" {
				return fmt.Errorf("Strict-Transport-Security %q (%v), want max-age=600; includeSubDomains", v, err)
			}
			return nil
		})
		r, err := framework.Get(envoy.HTTPAddress, "secure.example.com", "/")
		if err != nil || r.Status != http.StatusOK || r.Header.Get("Strict-Transport-Security") != "" {
			t.Errorf("plain HTTP: status %d, Strict-Transport-Security %q, %v: want 200 without it", r.Status, r.Header.Get("Strict-Transport-Security"), err)
		}
	})

	// annotations/ipdenylist.go sets use-forwarded-headers in the
	// ConfigMap and sends X-Forwarded-For: the address the trusted proxy
	// appended (here the header's last) is the client that the
	// ConfigMap's whitelist-source-range sees; without the key, the
	// connection's peer.
	t.Run("use-forwarded-headers", func(t *testing.T) {
		client := framework.LoopbackClient()
		forwarded := func(xff string) http.Header { return http.Header{"X-Forwarded-For": {xff}} }
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"use-forwarded-headers": "true", "whitelist-source-range": "18.0.0.0/8"}))
		// One wait for all: the listener (trusted hops) and the routes
		// (the range) are resources of their own, which Envoy may take
		// one after the other.
		framework.Eventually(t, convergeTimeout, "the forwarded client", func() error {
			for _, c := range []struct {
				xff    string
				status int
			}{{"18.0.0.1", 200}, {"10.10.10.10", 403}, {"18.4.0.1, 10.10.10.10", 403}, {"10.10.10.10, 18.4.0.1", 200}} {
				want := ""
				if c.status == 200 {
					want = "alpha"
				}
				if err := expectClientHeader(client, cp.HTTPPort, "plain.example.com", forwarded(c.xff), c.status, want); err != nil {
					return fmt.Errorf("X-Forwarded-For %q: %w", c.xff, err)
				}
			}
			return nil
		})
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"whitelist-source-range": "18.0.0.0/8"}))
		framework.Eventually(t, convergeTimeout, "the peer again", func() error {
			return expectClientHeader(client, cp.HTTPPort, "plain.example.com", forwarded("18.0.0.1"), http.StatusForbidden, "")
		})
	})

	// settings/global_access_block.go "should block User-Agents defined
	// in the ConfigMap", "should block Referers defined in the ConfigMap",
	// with its values: 403 on every host (allow.example.com's own range
	// and the HTTPS listener included), before anything else; "" in
	// block-referers refuses a request without a Referer (nginx's map of
	// an empty $http_referer); an expression RE2 cannot take refuses every
	// Ingress (503), never serving it without the block.
	t.Run("block-user-agents and block-referers", func(t *testing.T) {
		client := framework.LoopbackClient()
		const (
			chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/68.0.3440.106 Safari/537.36"
			iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 11_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/11.0 Mobile/15E148 Safari/604.1"
		)
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{
			"block-user-agents": `~*chrome\/68\.0\.3440\.106\ safari\/537\.36,AlphaBot`,
			"block-referers":    `~*example\.com,qwerty`,
		}))
		check := func(h http.Header, status int) error {
			want := ""
			if status == http.StatusOK {
				want = "alpha"
			}
			for _, host := range hosts {
				if err := expectClientHeader(client, cp.HTTPPort, host, h, status, want); err != nil {
					return err
				}
			}
			return nil
		}
		// The last subtest's whitelist-source-range refuses this client
		// too: the block has taken effect once a request without the
		// headers passes again and AlphaBot's does not.
		framework.Eventually(t, convergeTimeout, "the block", func() error {
			if err := check(nil, http.StatusOK); err != nil {
				return err
			}
			return check(http.Header{"User-Agent": {"AlphaBot"}}, http.StatusForbidden)
		})
		for _, c := range []struct {
			h      http.Header
			status int
		}{
			{http.Header{"User-Agent": {chrome}}, http.StatusForbidden},
			{http.Header{"User-Agent": {"alphabot"}}, http.StatusForbidden}, // nginx's map strings ignore case
			{http.Header{"User-Agent": {"AlphaBot2"}}, http.StatusOK},       // but match whole
			{http.Header{"User-Agent": {iphone}}, http.StatusOK},
			{http.Header{"Referer": {"example.com"}}, http.StatusForbidden},
			{http.Header{"Referer": {"http://www.EXAMPLE.com/page"}}, http.StatusForbidden},
			{http.Header{"Referer": {"qwerty"}}, http.StatusForbidden},
			{http.Header{"Referer": {"qwerty123"}}, http.StatusOK},
			{nil, http.StatusOK},
		} {
			if err := check(c.h, c.status); err != nil {
				t.Error(err)
			}
		}
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"block-referers": `qwerty, ""`}))
		framework.Eventually(t, convergeTimeout, "no Referer blocked", func() error {
			if err := check(nil, http.StatusForbidden); err != nil {
				return err
			}
			return check(http.Header{"Referer": {"https://example.com/"}}, http.StatusOK)
		})
		if r, err := framework.GetTLS(envoy.HTTPSAddress, "secure.example.com", ca.Pool(), "secure.example.com", "/"); err != nil || r.Status != http.StatusForbidden {
			t.Errorf("HTTPS without a Referer: %v, %v: want 403", r, err)
		}

		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"block-user-agents": `AlphaBot, ~(?<!Chrome)Safari`}))
		until("every Ingress refused", 10, 503, 503, 503)
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(nil))
		until("served again", 10, 200, 200, 200)
	})

	// A value that does not parse is reported and treated as unset; the
	// control plane goes on.
	t.Run("a bad value is treated as unset", func(t *testing.T) {
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"proxy-body-size": "lots"}))
		until("no limit but the annotation's", 10000, 200, 413, 200)
	})
}

func controllerConfigMapYAML(data map[string]string) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ingress-nginx-controller, namespace: ingress-nginx}\ndata:\n")
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(&b, "  %s: %q\n", k, data[k])
	}
	if len(data) == 0 {
		b.WriteString("  {}\n")
	}
	return b.String()
}

const configMapIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: default}
spec:
  tls: [{hosts: [secure.example.com], secretName: secure-cert}]
  rules:
  - host: secure.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: own
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8k}
spec:
  rules:
  - host: own.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: allow
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/allowlist-source-range: 127.0.0.1/32}
spec:
  rules:
  - host: allow.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// TestNginxDefaults checks serve --nginx-defaults through a real Envoy:
// without a ConfigMap, the Ingresses get ingress-nginx's defaults where
// they differ from Envoy's, as an ingress-nginx user expects them:
// client_max_body_size 1m (annotations/proxy.go's proxy-body-size, unset),
// ssl-redirect's 308 for a TLS host (ingress-nginx's ConfigMap default,
// which settings/tls.go "should not use ports during the HTTP to HTTPS
// redirection" relies on), HSTS on HTTPS (settings/tls.go "should configure
// HSTS policy header", the default max-age and includeSubDomains); an
// annotation still overrides them.
func TestNginxDefaults(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	secure := ca.Issue(t, "secure", "secure.example.com")
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha)+tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM))
	writeManifest(t, dir, "ingresses.yaml", configMapIngressesYAML)
	cp := framework.StartControlPlane(t, "--manifests", dir, "--nginx-defaults")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "secure.example.com over HTTPS", func() error {
		return framework.ExpectTLS(envoy.HTTPSAddress, "secure.example.com", ca.Pool(), "secure.example.com", "/", http.StatusOK, "alpha")
	})
	for _, host := range []string{"plain.example.com", "own.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	t.Run("a 1m body limit, which an annotation overrides", func(t *testing.T) {
		for _, c := range []struct {
			host         string
			size, status int
		}{{"plain.example.com", 1 << 19, 200}, {"plain.example.com", 1<<20 + 1, 413}, {"own.example.com", 1<<13 + 1, 413}} {
			if r := send(t, envoy, http.MethodPost, c.host, "/", strings.NewReader(strings.Repeat("x", c.size))); r.status != c.status {
				t.Errorf("POST of %d bytes to %s: %s, want %d", c.size, c.host, r, c.status)
			}
		}
	})
	t.Run("ssl-redirect for the TLS host, HSTS on HTTPS", func(t *testing.T) {
		if err := envoy.Expect("secure.example.com", "/", http.StatusPermanentRedirect, ""); err != nil {
			t.Errorf("plain HTTP to the TLS host: %v", err)
		}
		if err := envoy.Expect("plain.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Errorf("plain HTTP to a host without TLS: %v", err)
		}
		r, err := framework.GetTLS(envoy.HTTPSAddress, "secure.example.com", ca.Pool(), "secure.example.com", "/")
		if err != nil || r.Header.Get("Strict-Transport-Security") != "max-age=31536000; includeSubDomains" {
			t.Errorf("HTTPS: Strict-Transport-Security %q, %v: want ingress-nginx's default", r.Header.Get("Strict-Transport-Security"), err)
		}
	})
	// The trailing-slash 301 of the Kubernetes blog post "Before You
	// Migrate: Five Surprising Ingress-NGINX Behaviors" (nginx's
	// auto_redirect of a location ending in / that proxies; ingress-nginx
	// has no e2e test of it): /my-path, of the path /my-path/ (Prefix),
	// gets a 301 to /my-path/ with its query, as /exact of /exact/
	// (Exact); /served has a path of its own, so no redirect.
	t.Run("the trailing-slash redirect", func(t *testing.T) {
		writeManifest(t, dir, "slash.yaml", slashIngressYAML)
		framework.Eventually(t, convergeTimeout, "the slash Ingress served", func() error {
			return envoy.Expect("slash.example.com", "/my-path/x", http.StatusOK, "alpha")
		})
		for _, c := range []struct {
			path, location string
		}{{"/my-path?a=b", "/my-path/?a=b"}, {"/exact", "/exact/"}} {
			r, err := framework.Get(envoy.HTTPAddress, "slash.example.com", c.path)
			if loc, _ := url.Parse(r.Header.Get("Location")); err != nil || r.Status != http.StatusMovedPermanently || loc == nil || loc.RequestURI() != c.location {
				t.Errorf("GET %s: %d, Location %q, %v: want 301 to %s", c.path, r.Status, r.Header.Get("Location"), err, c.location)
			}
		}
		for _, path := range []string{"/my-path/", "/exact/", "/served", "/served/"} {
			if err := envoy.Expect("slash.example.com", path, http.StatusOK, "alpha"); err != nil {
				t.Errorf("GET %s: %v", path, err)
			}
		}
	})
	// settings/no_tls_redirect_locations.go: ingress-nginx's
	// no-tls-redirect-locations (by default /.well-known/acme-challenge)
	// keeps an ACME HTTP-01 challenge's Ingress path, as cert-manager's
	// solver writes it on the TLS host, on plain HTTP, where the CA asks
	// for it; the host's other paths are still redirected, and a
	// challenge path only / serves too (the exemption is the location's).
	t.Run("the ACME challenge's path is not redirected", func(t *testing.T) {
		writeManifest(t, dir, "acme.yaml", acmeSolverIngressYAML)
		framework.Eventually(t, convergeTimeout, "the solver's path over plain HTTP", func() error {
			return envoy.Expect("secure.example.com", "/.well-known/acme-challenge/token", http.StatusOK, "alpha")
		})
		for path, status := range map[string]int{"/": http.StatusPermanentRedirect, "/.well-known/acme-challenge/other": http.StatusPermanentRedirect} {
			if err := envoy.Expect("secure.example.com", path, status, ""); err != nil {
				t.Errorf("plain HTTP %s: %v", path, err)
			}
		}
	})
}

// slashIngressYAML has paths configured with a trailing slash: the
// blog post "Before You Migrate: Five Surprising Ingress-NGINX Behaviors".
const slashIngressYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: slash, namespace: default}
spec:
  rules:
  - host: slash.example.com
    http:
      paths:
      - {path: /my-path/, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /exact/, pathType: Exact, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /served/, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /served, pathType: Exact, backend: {service: {name: alpha, port: {number: 80}}}}
`

// acmeSolverIngressYAML is the Ingress cert-manager's HTTP-01 solver makes
// on the TLS host: the challenge's token path alone.
const acmeSolverIngressYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: cm-acme-http-solver, namespace: default}
spec:
  rules:
  - host: secure.example.com
    http: {paths: [{path: /.well-known/acme-challenge/token, pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// compressedPage is what compressedGet saw: the body decoded.
type compressedPage struct {
	status                         int
	encoding, vary, etag, body, ct string
}

// compressedGet asks address for host's pathQuery with acceptEncoding
// (none when empty), and decodes a gzip body, and a br one the client
// asked for.
func compressedGet(address, host, pathQuery, acceptEncoding string) (compressedPage, error) {
	return compressedGetAs(address, host, pathQuery, acceptEncoding, "")
}

// compressedGetAs is compressedGet with the User-Agent userAgent (Go's
// own when empty).
func compressedGetAs(address, host, pathQuery, acceptEncoding, userAgent string) (compressedPage, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+pathQuery, nil)
	if err != nil {
		return compressedPage{}, err
	}
	req.Host = host
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	// DisableCompression: the client neither asks for gzip itself nor
	// decodes it behind the test's back.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		return compressedPage{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return compressedPage{}, err
	}
	p := compressedPage{status: resp.StatusCode, encoding: resp.Header.Get("Content-Encoding"), vary: strings.Join(resp.Header.Values("Vary"), ", "),
		etag: resp.Header.Get("ETag"), ct: resp.Header.Get("Content-Type"), body: string(raw)}
	var decoded io.Reader
	switch p.encoding {
	case "br":
		if !strings.Contains(acceptEncoding, "br") {
			// Not Envoy's: a backend's own label, kept as it came.
			return p, nil
		}
		decoded = brotli.NewReader(bytes.NewReader(raw))
	case "gzip":
		if decoded, err = gzip.NewReader(bytes.NewReader(raw)); err != nil {
			return p, fmt.Errorf("Content-Encoding gzip, but the body is not: %v", err)
		}
	default:
		return p, nil
	}
	plain, err := io.ReadAll(decoded)
	if err != nil {
		return p, fmt.Errorf("the %s body does not decode: %v", p.encoding, err)
	}
	p.body = string(plain)
	return p, nil
}

// compressiblePages answers with the page its query asks: n bytes of
// text, of Content-Type type (none without), with the status, ETag,
// Content-Encoding and Cache-Control asked, chunked (without a
// Content-Length) with chunked: each of the compressors' conditions on
// its own.
func compressiblePages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, _ := strconv.Atoi(q.Get("n"))
	body := strings.Repeat("compress me, ", n/13+1)[:n]
	if q.Has("type") {
		w.Header().Set("Content-Type", q.Get("type"))
	} else {
		w.Header()["Content-Type"] = nil // no sniffing
	}
	for _, h := range []string{"ETag", "Content-Encoding", "Cache-Control"} {
		if v := q.Get(strings.ToLower(h)); v != "" {
			w.Header().Set(h, v)
		}
	}
	if !q.Has("chunked") {
		w.Header().Set("Content-Length", strconv.Itoa(n))
	}
	status := http.StatusOK
	if s := q.Get("status"); s != "" {
		status, _ = strconv.Atoi(s)
	}
	w.WriteHeader(status)
	if q.Has("chunked") {
		// Two writes with a flush between: no Content-Length.
		io.WriteString(w, body[:n/2])
		w.(http.Flusher).Flush()
		io.WriteString(w, body[n/2:])
		return
	}
	io.WriteString(w, body)
}

// TestCompression checks ingress-nginx's gzip through a real Envoy: the
// ConfigMap's use-gzip with its defaults (settings/gzip.go "should be
// enabled with default settings", which checks that nginx.tmpl, lines
// 320-330, writes gzip_comp_level 1, gzip_http_version 1.1,
// gzip_min_length 256, its gzip-types, gzip_proxied any and gzip_vary on),
// and a configuration-snippet's gzip on for its Ingress's paths alone
// (nginx's inheritance of the gzip directives, ngx_http_gzip_module). A
// backend of the test's answers with the type, length and headers each
// request asks (query parameters), so that each of nginx's conditions
// (ngx_http_gzip_header_filter: status 200, 403 or 404, no
// Content-Encoding, Content-Length at least gzip_min_length or none,
// gzip_types) is checked on its own.
func TestCompression(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(compressiblePages))
	t.Cleanup(srv.Close)
	backend := serverBackend(t, "pages", srv)
	dir := t.TempDir()
	snippets := map[string]string{"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"}
	withGzip := maps.Clone(snippets)
	withGzip["use-gzip"] = "true"
	writeManifest(t, dir, "services.yaml", echoServicesYAML(backend))
	writeManifest(t, dir, "ingresses.yaml", compressionIngressesYAML)
	writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(withGzip))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})

	// get asks host for a page: the query says what the backend answers.
	type page = compressedPage
	get := func(host, path, query string, acceptGzip bool) (page, error) {
		accept := ""
		if acceptGzip {
			accept = "gzip"
		}
		return compressedGet(envoy.HTTPAddress, host, path+"?"+query, accept)
	}
	want := func(n int) string { return strings.Repeat("compress me, ", n/13+1)[:n] }
	// check asks and checks the encoding (empty: none) and the body.
	check := func(t *testing.T, host, path, query string, acceptGzip bool, encoding string) page {
		t.Helper()
		p, err := get(host, path, query, acceptGzip)
		if err != nil {
			t.Fatalf("%s%s?%s: %v", host, path, query, err)
		}
		if p.encoding != encoding {
			t.Errorf("%s%s?%s (Accept-Encoding gzip: %v): Content-Encoding %q, want %q", host, path, query, acceptGzip, p.encoding, encoding)
		}
		u, _ := url.ParseQuery(query)
		if n, _ := strconv.Atoi(u.Get("n")); encoding != "br" && p.body != want(n) {
			t.Errorf("%s%s?%s: a body of %d bytes that is not the backend's %d", host, path, query, len(p.body), n)
		}
		return p
	}
	framework.Eventually(t, convergeTimeout, "plain.gzip.example compressed", func() error {
		p, err := get("plain.gzip.example", "/", "type=text/html&n=1000", true)
		if err != nil {
			return err
		}
		if p.status != http.StatusOK || p.encoding != "gzip" {
			return fmt.Errorf("status %d, Content-Encoding %q", p.status, p.encoding)
		}
		return nil
	})

	// settings/gzip.go "should be enabled with default settings":
	// text/html (always) and a type of ingress-nginx's gzip-types, at
	// least gzip_min_length 256 long, are gzipped and carry Vary:
	// Accept-Encoding (gzip_vary on); nginx compares the type without its
	// parameters.
	t.Run("use-gzip compresses text/html and the listed types", func(t *testing.T) {
		for _, q := range []string{"type=text/html&n=1000", "type=text/html;+charset=utf-8&n=1000", "type=application/json&n=300", "type=text/css&n=256", "type=TEXT/PLAIN&n=5000"} {
			p := check(t, "plain.gzip.example", "/", q, true, "gzip")
			if !strings.Contains(strings.ToLower(p.vary), "accept-encoding") {
				t.Errorf("%s: Vary %q, want Accept-Encoding (gzip_vary on)", q, p.vary)
			}
		}
	})
	// ngx_http_gzip_header_filter: a Content-Length under gzip_min_length,
	// a type not in gzip_types, a client that does not accept gzip, a
	// response already encoded and a status other than 200, 403 and 404
	// are sent as they are.
	t.Run("what nginx leaves alone", func(t *testing.T) {
		check(t, "plain.gzip.example", "/", "type=text/html&n=255", true, "")
		check(t, "plain.gzip.example", "/", "type=application/octet-stream&n=1000", true, "")
		check(t, "plain.gzip.example", "/", "type=image/png&n=1000", true, "")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000", false, "")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000&content-encoding=br", true, "br")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000&status=500", true, "")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000&status=206", true, "")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000&status=404", true, "gzip")
	})
	// nginx compresses a response without Content-Length whatever
	// gzip_min_length says (it compares the length only when there is
	// one), and keeps a strong ETag as a weak one.
	t.Run("no Content-Length, and the ETag", func(t *testing.T) {
		check(t, "plain.gzip.example", "/", "type=text/html&n=100&chunked=1", true, "gzip")
		p := check(t, "plain.gzip.example", "/", "type=text/html&n=1000&etag=%22v1%22", true, "gzip")
		if p.etag != `W/"v1"` {
			t.Errorf(`ETag %q, want W/"v1" (nginx's gzip makes a strong ETag weak)`, p.etag)
		}
	})
	// The differences docs/configmap.md states: Envoy compresses a
	// response without Content-Type (nginx does not: it matches no
	// gzip_types) and leaves one with Cache-Control: no-transform (nginx
	// compresses it).
	t.Run("the stated differences", func(t *testing.T) {
		check(t, "plain.gzip.example", "/", "n=1000", true, "gzip")
		check(t, "plain.gzip.example", "/", "type=text/html&n=1000&cache-control=no-transform", true, "")
	})
	// A configuration-snippet's gzip directives override the ConfigMap's
	// for its Ingress's paths: gzip off there, the host's other Ingress
	// compressed.
	t.Run("a snippet's gzip off overrides use-gzip for its Ingress", func(t *testing.T) {
		check(t, "mixed.gzip.example", "/snippet", "type=text/html&n=1000", true, "")
		check(t, "mixed.gzip.example", "/plain", "type=text/html&n=1000", true, "gzip")
	})

	// gzip-disable (nginx.tmpl writes gzip_disable "value" with use-gzip;
	// ngx_http_gzip_disable matches each expression caselessly, and the
	// msie6 mask as ngx_http_process_user_agent sets it): the clients it
	// names get their responses as they are, the others compressed, on
	// the ConfigMap's paths and the snippet's alike.
	t.Run("gzip-disable", func(t *testing.T) {
		withDisable := maps.Clone(withGzip)
		as := func(ua, host, path string) (string, error) {
			p, err := compressedGetAs(envoy.HTTPAddress, host, path+"?type=text/html&n=1000", "gzip", ua)
			return p.encoding, err
		}
		expect := func(what string, cases map[string]string) {
			t.Helper()
			framework.Eventually(t, convergeTimeout, what, func() error {
				for ua, want := range cases {
					got, err := as(ua, "plain.gzip.example", "/")
					if err != nil {
						return err
					}
					if got != want {
						return fmt.Errorf("User-Agent %q: Content-Encoding %q, want %q", ua, got, want)
					}
				}
				return nil
			})
		}
		withDisable["gzip-disable"] = "msie6"
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(withDisable))
		expect("msie6", map[string]string{
			"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)":      "",
			"Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)":          "",
			"Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)": "gzip",
			"Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)":      "gzip",
			"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Firefox/140.0": "gzip",
		})
		withDisable["gzip-disable"] = `googlebot|curl/[0-7]\.`
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(withDisable))
		expect("an expression, in any case", map[string]string{
			"Mozilla/5.0 (compatible; Googlebot/2.1)": "",
			"curl/7.88.1": "",
			"curl/8.5.0":  "gzip",
			"Mozilla/4.0 (compatible; MSIE 6.0; Windows)": "gzip",
		})
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(withGzip))
		expect("gzip-disable gone", map[string]string{"curl/7.88.1": "gzip"})
	})

	// Without use-gzip (settings/gzip.go "should be disabled by default")
	// nothing is compressed but the paths of a snippet's gzip on, with
	// its own gzip_types and gzip_min_length and nginx's default level.
	t.Run("without use-gzip only the snippet's paths", func(t *testing.T) {
		writeManifest(t, dir, "configmap.yaml", controllerConfigMapYAML(snippets))
		writeManifest(t, dir, "ingresses.yaml", strings.ReplaceAll(compressionIngressesYAML, "gzip off;", "gzip on;\n      gzip_types application/json;\n      gzip_min_length 100;"))
		framework.Eventually(t, convergeTimeout, "use-gzip gone", func() error {
			p, err := get("plain.gzip.example", "/", "type=text/html&n=1000", true)
			if err != nil {
				return err
			}
			if p.encoding != "" {
				return fmt.Errorf("Content-Encoding %q", p.encoding)
			}
			p, err = get("mixed.gzip.example", "/snippet", "type=application/json&n=150", true)
			if err != nil {
				return err
			}
			if p.encoding != "gzip" {
				return fmt.Errorf("the snippet's path: Content-Encoding %q", p.encoding)
			}
			return nil
		})
		check(t, "mixed.gzip.example", "/snippet", "type=application/json&n=100", true, "gzip")
		check(t, "mixed.gzip.example", "/snippet", "type=text/html&n=1000", true, "gzip")
		check(t, "mixed.gzip.example", "/snippet", "type=application/json&n=99", true, "")
		check(t, "mixed.gzip.example", "/snippet", "type=text/css&n=1000", true, "")
		check(t, "mixed.gzip.example", "/snippet", "type=application/json&n=1000", false, "")
		check(t, "mixed.gzip.example", "/plain", "type=text/html&n=1000", true, "")
		check(t, "mixed.gzip.example", "/plain", "type=application/json&n=1000", true, "")
		check(t, "plain.gzip.example", "/", "type=application/json&n=1000", true, "")
	})
}

const compressionIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: plain.gzip.example
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: pages, port: {number: 80}}}}]}
  - host: mixed.gzip.example
    http: {paths: [{path: /plain, pathType: Prefix, backend: {service: {name: pages, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      gzip off;
spec:
  rules:
  - host: mixed.gzip.example
    http: {paths: [{path: /snippet, pathType: Prefix, backend: {service: {name: pages, port: {number: 80}}}}]}
`

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// forgedHeaders are what a client sends to choose how the backend sees
// its request (docs/security.md, "Headers a client chooses").
var forgedHeaders = http.Header{
	"X-Forwarded-Host":          {"evil.example"},
	"X-Forwarded-Port":          {"1234"},
	"X-Forwarded-Proto":         {"myproto"},
	"X-Forwarded-Scheme":        {"myproto"},
	"X-Scheme":                  {"myproto"},
	"X-Real-Ip":                 {"6.6.6.6"},
	"X-Forwarded-For":           {"1.2.3.4"},
	"X-Original-Forwarded-For":  {"forged"},
	"X-Original-Forwarded-Host": {"forged"},
}

// forwardedView is what the backend saw of the headers a client may forge
// (one value each; "" when absent, "<n values>" when repeated).
type forwardedView map[string]string

func viewOf(h http.Header) forwardedView {
	v := forwardedView{}
	for name := range forgedHeaders {
		switch vs := h.Values(name); len(vs) {
		case 0:
		case 1:
			v[name] = vs[0]
		default:
			v[name] = fmt.Sprintf("<%d values: %s>", len(vs), strings.Join(vs, " | "))
		}
	}
	return v
}

// differences lists the headers whose value is not want's.
func (v forwardedView) differences(want forwardedView) []string {
	var out []string
	for name := range forgedHeaders {
		if v[name] != want[name] {
			out = append(out, fmt.Sprintf("%s %q (want %q)", name, v[name], want[name]))
		}
	}
	return out
}

const forwardedIngressYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  tls: [{hosts: [web.example.com], secretName: web-cert}]
  rules:
  - host: web.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// TestForwardedHeaders checks through a real Envoy that a client cannot
// choose the X-Forwarded-* headers, X-Real-IP or X-Original-Forwarded-*
// the backend sees, as ingress-nginx sets them itself on every request
// (rootfs/etc/nginx/template/nginx.tmpl's location: proxy_set_header
// X-Forwarded-Host $best_http_host, X-Forwarded-Port $pass_port, ...;
// rootfs/etc/nginx/lua/lua_ingress.lua's rewrite, which trusts the
// client's X-Forwarded-Proto, -Port and -Host only with
// use-forwarded-headers and names 443 for the HTTPS listener). It mirrors
// test/e2e/settings/forwarded_headers.go: "should not trust X-Forwarded
// headers when setting is false" and "should trust X-Forwarded headers
// when setting is true", with serve --trusted-forwarded-hops counting as
// use-forwarded-headers, and enable-real-ip trusting the address alone.
func TestForwardedHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	cert := ca.Issue(t, "web", "web.example.com")
	files := []manifest{
		{"services.yaml", echoServicesYAML(alpha) + tlsSecretYAML("web-cert", cert.CertPEM, cert.KeyPEM)},
		{"ingresses.yaml", forwardedIngressYAML},
	}
	// seen sends a request over plain HTTP or HTTPS and returns what
	// the backend saw.
	seen := func(envoy *framework.Envoy, https bool, header http.Header) (forwardedView, error) {
		scheme, address := "http", envoy.HTTPAddress
		if https {
			scheme, address = "https", envoy.HTTPSAddress
		}
		req, err := http.NewRequest(http.MethodGet, scheme+"://web.example.com/", nil)
		if err != nil {
			return nil, err
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true,
			TLSClientConfig: &tls.Config{ServerName: "web.example.com", RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, address)
			}}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var reply echo.Reply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: status %d, %v", scheme, resp.StatusCode, err)
		}
		if reply.Host != "web.example.com" {
			return nil, fmt.Errorf("%s: the backend saw Host %q", scheme, reply.Host)
		}
		return viewOf(reply.Header), nil
	}
	expect := func(t *testing.T, envoy *framework.Envoy, https bool, header http.Header, want forwardedView) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, "the backend's view", func() error {
			got, err := seen(envoy, https, header)
			if err != nil {
				return err
			}
			if d := got.differences(want); len(d) > 0 {
				return fmt.Errorf("the backend saw %s", strings.Join(d, "; "))
			}
			return nil
		})
	}
	// Envoy's peer on loopback is 127.0.0.1.
	const peer = "127.0.0.1"

	// forwarded_headers.go, "should not trust X-Forwarded headers when
	// setting is false": without a ConfigMap too, every header is the
	// request's; the client's X-Forwarded-For and X-Forwarded-Host are
	// X-Original-Forwarded-For and -Host.
	t.Run("not trusted", func(t *testing.T) {
		fm := startFileMode(t, nil, files...)
		t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
		untrusted := func(scheme, port string) forwardedView {
			return forwardedView{"X-Forwarded-Host": "web.example.com", "X-Forwarded-Port": port,
				"X-Forwarded-Proto": scheme, "X-Forwarded-Scheme": scheme, "X-Scheme": scheme,
				"X-Real-Ip": peer, "X-Forwarded-For": peer,
				"X-Original-Forwarded-For": "1.2.3.4", "X-Original-Forwarded-Host": "evil.example"}
		}
		expect(t, fm.envoy, false, forgedHeaders, untrusted("http", "80"))
		expect(t, fm.envoy, true, forgedHeaders, untrusted("https", "443"))
		// Nothing forged: no X-Original-* header, not even the client's
		// own of that name.
		clean := untrusted("http", "80")
		delete(clean, "X-Original-Forwarded-For")
		delete(clean, "X-Original-Forwarded-Host")
		expect(t, fm.envoy, false, nil, clean)
		expect(t, fm.envoy, false, http.Header{"X-Original-Forwarded-For": {"forged"}, "X-Original-Forwarded-Host": {"forged"}}, clean)
	})

	// forwarded_headers.go, "should trust X-Forwarded headers when
	// setting is true" (the first X-Forwarded-For address is the
	// client), and settings/enable_real_ip.go: enable-real-ip trusts the
	// client's address, never its X-Forwarded-Host, -Port or -Proto.
	t.Run("use-forwarded-headers and enable-real-ip", func(t *testing.T) {
		fm := startFileModeWith(t, []string{"--configmap", "ingress-nginx/ingress-nginx-controller"},
			append(files, manifest{"configmap.yaml", controllerConfigMapYAML(map[string]string{"use-forwarded-headers": "true"})})...)
		t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
		trusted := forwardedView{"X-Forwarded-Host": "evil.example", "X-Forwarded-Port": "1234",
			"X-Forwarded-Proto": "myproto", "X-Forwarded-Scheme": "myproto", "X-Scheme": "myproto",
			"X-Real-Ip": "1.2.3.4", "X-Forwarded-For": "1.2.3.4",
			"X-Original-Forwarded-For": "1.2.3.4", "X-Original-Forwarded-Host": "evil.example"}
		expect(t, fm.envoy, false, forgedHeaders, trusted)
		expect(t, fm.envoy, true, forgedHeaders, trusted)
		// A trusted proxy that sends none of them: the request's.
		expect(t, fm.envoy, true, nil, forwardedView{"X-Forwarded-Host": "web.example.com", "X-Forwarded-Port": "443",
			"X-Forwarded-Proto": "https", "X-Forwarded-Scheme": "https", "X-Scheme": "https",
			"X-Real-Ip": peer, "X-Forwarded-For": peer})

		// compute-full-forwarded-for: the header as received with the
		// peer appended; X-Original-Forwarded-For is still the client's
		// (copied before Envoy appends).
		writeManifest(t, fm.dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"use-forwarded-headers": "true", "compute-full-forwarded-for": "true"}))
		framework.Eventually(t, convergeTimeout, "the full X-Forwarded-For", func() error {
			got, err := seen(fm.envoy, false, forgedHeaders)
			if err != nil {
				return err
			}
			if xff := got["X-Forwarded-For"]; !strings.HasPrefix(xff, "1.2.3.4,") || got["X-Original-Forwarded-For"] != "1.2.3.4" || got["X-Real-Ip"] != "1.2.3.4" {
				return fmt.Errorf("X-Forwarded-For %q, X-Original-Forwarded-For %q, X-Real-IP %q; want 1.2.3.4 and the peer, 1.2.3.4, 1.2.3.4",
					xff, got["X-Original-Forwarded-For"], got["X-Real-Ip"])
			}
			return nil
		})

		writeManifest(t, fm.dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"enable-real-ip": "true"}))
		realIP := forwardedView{"X-Forwarded-Host": "web.example.com", "X-Forwarded-Port": "80",
			"X-Forwarded-Proto": "http", "X-Forwarded-Scheme": "http", "X-Scheme": "http",
			"X-Real-Ip": "1.2.3.4", "X-Forwarded-For": "1.2.3.4",
			"X-Original-Forwarded-For": "1.2.3.4", "X-Original-Forwarded-Host": "evil.example"}
		expect(t, fm.envoy, false, forgedHeaders, realIP)

		// forwarded-host-header: X-Original-Forwarded-Host copies the
		// header named (nginx.tmpl's buildForwardedHost).
		writeManifest(t, fm.dir, "configmap.yaml", controllerConfigMapYAML(map[string]string{"enable-real-ip": "true", "forwarded-host-header": "X-Client-Host"}))
		withClientHost := http.Header{"X-Client-Host": {"client.example"}}
		maps.Copy(withClientHost, forgedHeaders)
		realIP["X-Original-Forwarded-Host"] = "client.example"
		expect(t, fm.envoy, false, withClientHost, realIP)
	})

	// serve --trusted-forwarded-hops 1 says a proxy in front sets these
	// headers: trusted, as with use-forwarded-headers.
	t.Run("trusted-forwarded-hops", func(t *testing.T) {
		fm := startFileModeWith(t, []string{"--trusted-forwarded-hops", "1"}, files...)
		t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
		expect(t, fm.envoy, false, forgedHeaders, forwardedView{"X-Forwarded-Host": "evil.example", "X-Forwarded-Port": "1234",
			"X-Forwarded-Proto": "myproto", "X-Forwarded-Scheme": "myproto", "X-Scheme": "myproto",
			"X-Real-Ip": "1.2.3.4", "X-Forwarded-For": "1.2.3.4",
			"X-Original-Forwarded-For": "1.2.3.4", "X-Original-Forwarded-Host": "evil.example"})
	})
}

// TestForwardedProtoDecidesRedirect checks through a real Envoy that,
// with use-forwarded-headers, a TLS-offloading proxy in front saying
// X-Forwarded-Proto: https is not redirected to HTTPS again:
// lua_ingress.lua's rewrite takes pass_access_scheme from the header
// when use_forwarded_headers, and redirect_to_https redirects only when
// it is "http" (force-ssl-redirect, as ingress-nginx's docs advise
// behind a load balancer that terminates TLS). Without the key, the
// header is the client's to forge and every plain request is redirected.
func TestForwardedProtoDecidesRedirect(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	forced := strings.Replace(hostIngressYAML("forced", "forced.example.com", "alpha", ""), "namespace: default\n",
		"namespace: default\n  annotations: {nginx.ingress.kubernetes.io/force-ssl-redirect: \"true\"}\n", 1)
	fm, configure := startConfigMapMode(t, map[string]string{"use-forwarded-headers": "true"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", forced})
	// exchange sends GET / with X-Forwarded-Proto proto (none when
	// empty), following no redirect.
	exchange := func(proto string) (status int, location, sawProto string, err error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+fm.envoy.HTTPAddress+"/a", nil)
		if err != nil {
			return 0, "", "", err
		}
		req.Host = "forced.example.com"
		if proto != "" {
			req.Header.Set("X-Forwarded-Proto", proto)
		}
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		if resp.Header.Get("X-Backend") != "" {
			var reply echo.Reply
			if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
				return 0, "", "", err
			}
			sawProto = reply.Header.Get("X-Forwarded-Proto")
		}
		return resp.StatusCode, resp.Header.Get("Location"), sawProto, nil
	}
	expect := func(t *testing.T, proto string, redirected bool) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, fmt.Sprintf("X-Forwarded-Proto %q", proto), func() error {
			status, location, saw, err := exchange(proto)
			switch {
			case err != nil:
				return err
			case redirected && (status != http.StatusPermanentRedirect || location != "https://forced.example.com/a"):
				return fmt.Errorf("status %d, Location %q; want 308 to https://forced.example.com/a", status, location)
			case !redirected && (status != http.StatusOK || saw != proto):
				return fmt.Errorf("status %d, the backend saw X-Forwarded-Proto %q; want 200 and %q", status, saw, proto)
			}
			return nil
		})
	}
	t.Run("use-forwarded-headers", func(t *testing.T) {
		expect(t, "https", false)
		expect(t, "myproto", false) // redirect_to_https: only "http"
		expect(t, "http", true)
		expect(t, "", true) // Envoy says http for the connection
	})
	t.Run("not trusted", func(t *testing.T) {
		configure(nil)
		expect(t, "https", true)
		expect(t, "", true)
	})
}

// TestControllerConfigMapOriginalURI checks through a real Envoy the
// ConfigMap's proxy-add-original-uri-header: nginx.tmpl then writes
// proxy_set_header X-Original-URI $request_uri in every location, so the
// backend of a rewritten path learns what the client asked for, and a
// client's own X-Original-URI is replaced.
func TestControllerConfigMapOriginalURI(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	const rewritten = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/rewrite-target: /$2
spec:
  rules:
  - host: app.example.com
    http: {paths: [{path: /app(/|$)(.*), pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}]}
`
	fm, configure := startConfigMapMode(t, map[string]string{"proxy-add-original-uri-header": "true"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", rewritten})
	seen := func() (echo.Reply, error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+fm.envoy.HTTPAddress+"/app/x?q=1", nil)
		if err != nil {
			return echo.Reply{}, err
		}
		req.Host = "app.example.com"
		req.Header.Set("X-Original-URI", "/forged")
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return echo.Reply{}, err
		}
		defer resp.Body.Close()
		var reply echo.Reply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
			return echo.Reply{}, fmt.Errorf("status %d, %v", resp.StatusCode, err)
		}
		return reply, nil
	}
	framework.Eventually(t, convergeTimeout, "X-Original-URI", func() error {
		r, err := seen()
		switch {
		case err != nil:
			return err
		case r.Path != "/x" || r.Header.Get("X-Original-Uri") != "/app/x?q=1":
			return fmt.Errorf("the backend saw path %q and X-Original-URI %q; want /x and /app/x?q=1", r.Path, r.Header.Values("X-Original-Uri"))
		}
		return nil
	})
	configure(nil)
	framework.Eventually(t, convergeTimeout, "the client's X-Original-URI as sent, without the key", func() error {
		r, err := seen()
		if err == nil && r.Header.Get("X-Original-Uri") != "/forged" {
			err = fmt.Errorf("the backend saw X-Original-URI %q, want the client's", r.Header.Values("X-Original-Uri"))
		}
		return err
	})
}

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// redirectIngress is an Ingress of one host and path to the echo Service,
// with ingress-nginx annotations (a YAML flow mapping's entries, without
// the prefix) and, when tlsHosts is not empty, a spec.tls entry for them
// with the Secret redirect-cert.
func redirectIngress(name, host, path, annotations string, tlsHosts ...string) string {
	var ann []string
	for _, a := range strings.Split(annotations, ", ") {
		if a != "" {
			ann = append(ann, "nginx.ingress.kubernetes.io/"+a)
		}
	}
	tls := ""
	if len(tlsHosts) > 0 {
		tls = fmt.Sprintf("  tls: [{hosts: [%s], secretName: redirect-cert}]\n", strings.Join(tlsHosts, ", "))
	}
	return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: default, annotations: {%s}}
spec:
%s  rules: [{host: %s, http: {paths: [{path: %s, pathType: Prefix, backend: {service: {name: echo, port: {number: 80}}}}]}}]
`, name, strings.Join(ann, ", "), tls, host, path)
}

// redirectIngressesYAML are the Ingresses of ingress-nginx's redirect
// tests, each on a host of its own (ingress-nginx's tests run one at a
// time and reuse hosts).
var redirectIngressesYAML = redirectIngress("redirect", "redirect", "/something", `permanent-redirect: "http://redirect.example.com"`) +
	redirectIngress("redirect-code", "redirect-code", "/something", `permanent-redirect: "http://redirect.example.com", permanent-redirect-code: "302"`) +
	redirectIngress("temporal", "temporal.bar.com", "/", `temporal-redirect: "https://temporal.example.com/new?from=old", permanent-redirect: "http://permanent.example.com"`) +
	redirectIngress("rr-absolute", "rr.foo.com", "/something", `permanent-redirect: "/new-location", relative-redirects: "false"`) +
	redirectIngress("rr-relative", "rr-relative.foo.com", "/something", `permanent-redirect: "/new-location", relative-redirects: "true"`) +
	redirectIngress("force", "forcesslredirect.bar.com", "/", `force-ssl-redirect: "true"`) +
	redirectIngress("force-port", "port.bar.com", "/", `force-ssl-redirect: "true", use-port-in-redirects: "true"`) +
	redirectIngress("preserve", "preservetrailingslash.bar.com", "/", `ssl-redirect: "true", preserve-trailing-slash: "true"`, "preservetrailingslash.bar.com") +
	redirectIngress("ssl-no-cert", "nocert.bar.com", "/", `ssl-redirect: "true"`) +
	redirectIngress("www-http", "fromtowwwredirect.bar.com", "/", `from-to-www-redirect: "true"`) +
	redirectIngress("www-https", "fromtowww-tls.bar.com", "/", `from-to-www-redirect: "true"`, "fromtowww-tls.bar.com", "www.fromtowww-tls.bar.com") +
	redirectIngress("approot", "approot.bar.com", "/", `app-root: "/foo"`)

// TestRedirectAnnotations checks, through a real Envoy, the status and the
// Location ingress-nginx's redirect tests expect, and that the backend is
// not reached by a redirected request.
func TestRedirectAnnotations(t *testing.T) {
	b := echoBackends(t, "echo")
	ca := framework.NewCA(t, "ingress-xds redirect CA")
	cert := ca.Issue(t, "redirect", "preservetrailingslash.bar.com", "fromtowww-tls.bar.com", "www.fromtowww-tls.bar.com")
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(b[0])},
		manifest{"secrets.yaml", tlsSecretYAML("redirect-cert", cert.CertPEM, cert.KeyPEM)},
		manifest{"redirects.yaml", redirectIngressesYAML})
	envoy, cp := fm.envoy, fm.cp
	t.Cleanup(func() { assertNothingRejected(t, envoy) })
	framework.Eventually(t, convergeTimeout, "the last redirect served", func() error {
		return expectRedirect(envoy.Get("approot.bar.com", "/"))(http.StatusFound, "http://approot.bar.com/foo")
	})

	for _, tc := range []struct {
		name, host, path string
		status           int
		location         string
	}{
		// redirect.go "should respond with a standard redirect code": the
		// Location is the URL exactly, the request's path not appended.
		{"permanent-redirect", "redirect", "/something", http.StatusMovedPermanently, "http://redirect.example.com"},
		{"permanent-redirect, a longer path and a query", "redirect", "/something/else?a=1", http.StatusMovedPermanently, "http://redirect.example.com"},
		// redirect.go "should respond with a custom redirect code".
		{"permanent-redirect-code", "redirect-code", "/something", http.StatusFound, "http://redirect.example.com"},
		// redirect/redirect_test.go TestTemporalRedirectWithDefaultCode
		// (no e2e test): temporal-redirect wins over permanent-redirect,
		// with 302.
		{"temporal-redirect", "temporal.bar.com", "/any", http.StatusFound, "https://temporal.example.com/new?from=old"},
		// relativeredirects.go "should respond with absolute URL in
		// Location": nginx's absolute_redirect adds scheme and host.
		{"absolute path made absolute", "rr.foo.com", "/something?dropped=1", http.StatusMovedPermanently, "http://rr.foo.com/new-location"},
		// relativeredirects.go "should respond with relative URL in
		// Location".
		{"relative-redirects", "rr-relative.foo.com", "/something", http.StatusMovedPermanently, "/new-location"},
		// forcesslredirect.go "should redirect to https": 308, the trailing
		// slash of / dropped, so no path at all; lua_ingress.lua
		// redirect_to_https drops one trailing slash of any path and keeps
		// the query.
		{"force-ssl-redirect of /", "forcesslredirect.bar.com", "/", http.StatusPermanentRedirect, "https://forcesslredirect.bar.com"},
		// ingress-nginx's Lua drops one slash of the request URI as sent
		// (/a/b// gives /a/b/); Envoy merges repeated slashes before
		// routing (so that //admin meets /admin's access controls), and
		// its redirect is of /a/b/, which gives /a/b: the stated
		// difference (docs/annotations.md's preface).
		{"force-ssl-redirect drops one trailing slash", "forcesslredirect.bar.com", "/a/b/", http.StatusPermanentRedirect, "https://forcesslredirect.bar.com/a/b"},
		{"force-ssl-redirect of merged slashes", "forcesslredirect.bar.com", "/a/b//", http.StatusPermanentRedirect, "https://forcesslredirect.bar.com/a/b"},
		{"force-ssl-redirect keeps the query", "forcesslredirect.bar.com", "/a/?q=1", http.StatusPermanentRedirect, "https://forcesslredirect.bar.com/a/?q=1"},
		{"force-ssl-redirect drops the Host's port", "forcesslredirect.bar.com:8080", "/a", http.StatusPermanentRedirect, "https://forcesslredirect.bar.com/a"},
		// lua_ingress.lua redirect_to_https with use-port-in-redirects: the
		// HTTPS listener's port.
		{"use-port-in-redirects", "port.bar.com", "/a/", http.StatusPermanentRedirect, fmt.Sprintf("https://port.bar.com:%d/a", cp.HTTPSPort)},
		{"use-port-in-redirects of /", "port.bar.com", "/", http.StatusPermanentRedirect, fmt.Sprintf("https://port.bar.com:%d", cp.HTTPSPort)},
		// preservetrailingslash.go "should allow preservation of trailing
		// slashes": ssl-redirect on a host with a certificate.
		{"preserve-trailing-slash", "preservetrailingslash.bar.com", "/", http.StatusPermanentRedirect, "https://preservetrailingslash.bar.com/"},
		{"preserve-trailing-slash of a path", "preservetrailingslash.bar.com", "/a/", http.StatusPermanentRedirect, "https://preservetrailingslash.bar.com/a/"},
		// fromtowwwredirect.go "should redirect from www HTTP to HTTP": the
		// apex host with the listener's port, the path kept.
		{"from-to-www-redirect", "www.fromtowwwredirect.bar.com", "/foo", http.StatusPermanentRedirect, fmt.Sprintf("http://fromtowwwredirect.bar.com:%d/foo", cp.HTTPPort)},
		// ngx_srv_redirect.lua drops the last character of the request
		// URI when it is "/": not with a query that ends otherwise.
		{"from-to-www-redirect drops a trailing slash", "www.fromtowwwredirect.bar.com", "/foo/", http.StatusPermanentRedirect, fmt.Sprintf("http://fromtowwwredirect.bar.com:%d/foo", cp.HTTPPort)},
		{"from-to-www-redirect keeps a path and query whole", "www.fromtowwwredirect.bar.com", "/foo/?a=b", http.StatusPermanentRedirect, fmt.Sprintf("http://fromtowwwredirect.bar.com:%d/foo/?a=b", cp.HTTPPort)},
		// approot.go "should redirect to /foo": exactly /, the query dropped.
		{"app-root", "approot.bar.com", "/?a=b", http.StatusFound, "http://approot.bar.com/foo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := expectRedirect(envoy.Get(tc.host, tc.path))(tc.status, tc.location); err != nil {
				t.Errorf("GET %s%s: %v", tc.host, tc.path, err)
			}
		})
	}

	t.Run("served, not redirected", func(t *testing.T) {
		for _, c := range []struct{ host, path string }{
			// lua_ingress.lua redirect_to_https: ssl-redirect only for a
			// host with a certificate.
			{"nocert.bar.com", "/"},
			// approot.go: app-root is for / only.
			{"approot.bar.com", "/bar"},
			// fromtowwwredirect.go: the apex host is served.
			{"fromtowwwredirect.bar.com", "/foo"},
		} {
			if err := envoy.Expect(c.host, c.path, http.StatusOK, "echo"); err != nil {
				t.Error(err)
			}
		}
		// redirect.go: only the Ingress's paths redirect.
		if err := envoy.Expect("redirect", "/other", http.StatusNotFound, ""); err != nil {
			t.Error(err)
		}
	})

	// fromtowwwredirect.go "should redirect from www HTTPS to HTTPS": over
	// HTTPS the www name (its certificate covers both) gets the apex with
	// the HTTPS listener's port; the apex is served.
	t.Run("from-to-www-redirect over HTTPS", func(t *testing.T) {
		roots := ca.Pool()
		www := "www.fromtowww-tls.bar.com"
		want := fmt.Sprintf("https://fromtowww-tls.bar.com:%d", cp.HTTPSPort)
		if err := expectRedirect(framework.GetTLS(envoy.HTTPSAddress, www, roots, www, "/"))(http.StatusPermanentRedirect, want); err != nil {
			t.Errorf("HTTPS %s/: %v", www, err)
		}
		r, err := framework.GetTLS(envoy.HTTPSAddress, "fromtowww-tls.bar.com", roots, "fromtowww-tls.bar.com", "/")
		if err != nil || r.Status != http.StatusOK || r.Backend != "echo" {
			t.Errorf("HTTPS fromtowww-tls.bar.com/: got %s, %v; want 200 from echo", r, err)
		}
	})

	// preservetrailingslash.go: the host with ssl-redirect is served over
	// HTTPS.
	t.Run("ssl-redirect's host over HTTPS", func(t *testing.T) {
		host := "preservetrailingslash.bar.com"
		r, err := framework.GetTLS(envoy.HTTPSAddress, host, ca.Pool(), host, "/")
		if err != nil || r.Status != http.StatusOK || r.Backend != "echo" {
			t.Errorf("HTTPS %s/: got %s, %v; want 200 from echo", host, r, err)
		}
	})
}

// expectRedirect checks a response is a redirect with exactly this status
// and Location, answered by Envoy: the backend was not reached.
func expectRedirect(r framework.Response, err error) func(status int, location string) error {
	return func(status int, location string) error {
		if err != nil {
			return err
		}
		if r.Status != status || r.Backend != "" || r.Header.Get("Location") != location || len(r.Header.Values("Location")) != 1 {
			return fmt.Errorf("got %s with Location %q, want %d to %q from Envoy", r, r.Header.Values("Location"), status, location)
		}
		return nil
	}
}

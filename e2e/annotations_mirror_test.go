package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// mirrored is what the mirror target received of one copy.
type mirrored struct {
	method, path, host, body, id string
	leaked                       []string // ingress-xds's own mirror headers, which must never arrive
}

// TestMirrorAnnotations checks mirror-target, mirror-host and
// mirror-request-body through a real Envoy: the target receives a copy of
// each request, with the path, Host and body ingress-nginx's mirror
// location gives it, and the client gets the backend's answer whatever the
// target answers. ingress-nginx's test/e2e/annotations/mirror.go ("should
// set mirror-target to http://localhost/mirror", "... to
// https://test.env.com/$request_uri", "should disable
// mirror-request-body") looks only for the directives in nginx.conf;
// what the target receives is what nginx's mirror and proxy_pass
// documentation says. The target listens in a network namespace
// (198.18.0.0/15), neither local nor an address of this host, which the
// control plane refuses, by name and by the addresses it resolves a name
// to (a DNS server of the test's).
func TestMirrorAnnotations(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	netns := framework.NewNetns(t)
	copies := make(chan mirrored, 64)
	l, err := netns.Listen("tcp", net.JoinHostPort(netns.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	target := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var leaked []string
		for name := range r.Header {
			if strings.HasPrefix(strings.ToLower(name), "x-ingress-xds-") {
				leaked = append(leaked, name)
			}
		}
		copies <- mirrored{r.Method, r.URL.RequestURI(), r.Host, string(body), r.Header.Get("X-Test-Id"), leaked}
		// Its answer must never reach the client.
		http.Error(w, "from the mirror", http.StatusServiceUnavailable)
	})}
	go target.Serve(l)
	t.Cleanup(func() { target.Close() })
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	// Names of the target, resolved by the control plane: one to the
	// target, one to this host's loopback, where Envoy's admin interface
	// and the control plane listen.
	dns := framework.StartDNS(t, 1)
	dns.Set("copies.mirror.test", netns.IP)
	dns.Set("evil.mirror.test", "127.0.0.1")

	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", strings.NewReplacer("TARGET", addr, "NAMED", "copies.mirror.test:"+port, "EVIL", "evil.mirror.test:"+port).Replace(mirrorIngressesYAML))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--enable-external-name",
		"--external-name-dns-server", dns.Address, "--external-name-refresh", "2s")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})

	// exchange sends one request and returns the copy the target got
	// (matched by X-Test-ID), after checking the client got alpha's
	// answer.
	n := 0
	exchange := func(t *testing.T, method, host, path, body string, header map[string]string) mirrored {
		t.Helper()
		n++
		id := fmt.Sprintf("copy-%d", n)
		req, _ := http.NewRequest(method, "http://"+envoy.HTTPAddress+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("X-Test-Id", id)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "alpha" {
			t.Errorf("%s %s%s: status %d from %q, want 200 from alpha (never the mirror's answer)", method, host, path, resp.StatusCode, resp.Header.Get("X-Backend"))
		}
		// Waiting for the copy is not a timing assertion: the bound only
		// keeps a lost copy from hanging the test.
		deadline := time.After(convergeTimeout)
		for {
			select {
			case c := <-copies:
				if c.id == id {
					if len(c.leaked) > 0 {
						t.Errorf("the copy carried %v", c.leaked)
					}
					return c
				}
			case <-deadline:
				t.Fatalf("%s %s%s: no copy reached the mirror target", method, host, path)
			}
		}
	}
	// A target is copied to once the control plane has resolved and
	// checked its address: until a probe's copy arrives.
	probe := 0
	for _, host := range []string{"uri.example.com", "literal.example.com", "rewrite.example.com", "named.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" mirrored", func() error {
			probe++
			id := fmt.Sprintf("probe-%d", probe)
			req, _ := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
			req.Host = host
			req.Header.Set("X-Test-Id", id)
			resp, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			wait := time.After(time.Second)
			for {
				select {
				case c := <-copies:
					if c.id == id {
						return nil
					}
				case <-wait:
					return fmt.Errorf("%s: no copy of %s yet", host, id)
				}
			}
		})
	}

	// mirror.go "... to https://test.env.com/$request_uri" and the docs'
	// form, target$request_uri: the request's path and query, its
	// method and body, with mirror-host as Host. A client's own
	// x-ingress-xds-mirror-path changes nothing.
	t.Run("$request_uri, mirror-host, the body", func(t *testing.T) {
		c := exchange(t, http.MethodPost, "uri.example.com", "/a/b?q=1&r=2", "hello", map[string]string{"X-Ingress-Xds-Mirror-Path": "/evil"})
		if c.method != http.MethodPost || c.path != "/a/b?q=1&r=2" || c.host != "mirror.example.com" || c.body != "hello" {
			t.Errorf("the copy: %+v, want POST /a/b?q=1&r=2, Host mirror.example.com, body hello", c)
		}
	})
	// mirror.go "should set mirror-target to http://localhost/mirror"
	// and "should disable mirror-request-body": the target's own path
	// then the request's query; no body; Host the target's host.
	t.Run("a literal path, mirror-request-body off", func(t *testing.T) {
		c := exchange(t, http.MethodPost, "literal.example.com", "/x/y?k=v", "secret", nil)
		host, _, _ := net.SplitHostPort(addr)
		if c.method != http.MethodPost || c.path != "/mirror?k=v" || c.host != host || c.body != "" {
			t.Errorf("the copy: %+v, want POST /mirror?k=v, Host %s, no body", c, host)
		}
		if c := exchange(t, http.MethodGet, "literal.example.com", "/noquery", "", nil); c.path != "/mirror" {
			t.Errorf("without a query the copy asked for %q, want /mirror", c.path)
		}
	})
	// A name, resolved by the control plane: the copy goes to its
	// checked address, with the name as Host.
	t.Run("a name the control plane resolves", func(t *testing.T) {
		c := exchange(t, http.MethodPut, "named.example.com", "/n?x=1", "named", nil)
		if c.method != http.MethodPut || c.path != "/n?x=1" || c.host != "copies.mirror.test" || c.body != "named" {
			t.Errorf("the copy: %+v, want PUT /n?x=1, Host copies.mirror.test, body named", c)
		}
	})
	// A name that resolves to loopback is refused: no cluster, no copy;
	// the Ingress is served.
	t.Run("a name that resolves to loopback is refused", func(t *testing.T) {
		if err := envoy.Expect("evil.example.com", "/", http.StatusOK, "alpha"); err != nil {
			t.Error(err)
		}
		if dump := envoy.ConfigDump(); strings.Contains(dump, "evil.mirror.test") || !strings.Contains(dump, "copies.mirror.test") {
			t.Errorf("Envoy's configuration names evil.mirror.test, or not copies.mirror.test: the check by address did not hold")
		}
	})
	// $request_uri is the request as the client sent it, before
	// rewrite-target changes what the backend gets.
	t.Run("$request_uri is the path before a rewrite", func(t *testing.T) {
		c := exchange(t, http.MethodGet, "rewrite.example.com", "/app/page?k=v", "", nil)
		if c.path != "/copy/app/page?k=v" {
			t.Errorf("the copy asked for %q, want /copy/app/page?k=v", c.path)
		}
	})
}

const mirrorIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: uri
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/mirror-target: http://TARGET$request_uri
    nginx.ingress.kubernetes.io/mirror-host: mirror.example.com
spec:
  rules:
  - host: uri.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: literal
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/mirror-target: http://TARGET/mirror
    nginx.ingress.kubernetes.io/mirror-request-body: "off"
spec:
  rules:
  - host: literal.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: rewrite
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/rewrite-target: /$2
    nginx.ingress.kubernetes.io/mirror-target: http://TARGET/copy$request_uri
spec:
  rules:
  - host: rewrite.example.com
    http: {paths: [{path: "/app(/|$)(.*)", pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}, {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: named
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/mirror-target: http://NAMED$request_uri
spec:
  rules:
  - host: named.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: evil
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/mirror-target: http://EVIL/quitquitquit
spec:
  rules:
  - host: evil.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// BenchmarkMirror measures what a mirror target costs a request, as the
// client sees it: the same request to the same backend through a route
// that copies it to a target (in a network namespace, answering at once)
// and through one that does not, one keep-alive connection, one request at
// a time, rounds taking turns on one Envoy. Envoy does not wait for the
// copy's answer; what it spends on the copy is in the figure only as far
// as it delays the next request. docs/benchmarks.md has figures.
func BenchmarkMirror(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	netns := framework.NewNetns(b)
	l, err := netns.Listen("tcp", net.JoinHostPort(netns.IP, "0"))
	if err != nil {
		b.Fatal(err)
	}
	target := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})}
	go target.Serve(l)
	b.Cleanup(func() { target.Close() })
	dir := b.TempDir()
	ingresses := strings.ReplaceAll(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: mirrored
  namespace: default
  annotations: {nginx.ingress.kubernetes.io/mirror-target: "http://TARGET$request_uri"}
spec:
  rules:
  - host: mirrored.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: plain.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`, "TARGET", l.Addr().String())
	for name, content := range map[string]string{"services.yaml": echoServicesYAML(alpha), "ingresses.yaml": ingresses} {
		writeManifest(b, dir, name, content)
	}
	cp := framework.StartControlPlane(b, "--manifests", dir, "--enable-external-name")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	get := func(host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/page?x=1", host, nil, http.StatusOK, "")
		return err
	}
	framework.Eventually(b, convergeTimeout, "the mirror applied", func() error {
		if err := get("plain.example.com"); err != nil {
			return err
		}
		if !strings.Contains(envoy.ConfigDump(), "request_mirror_policies") {
			return fmt.Errorf("no mirror policy in Envoy's routes yet")
		}
		return get("mirrored.example.com")
	})
	benchRounds(b, []string{"plain", "mirrored"}, func(name string) error { return get(name + ".example.com") })
}

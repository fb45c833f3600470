package ingress_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

const redirectService = `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{port: 80}]}
`

func vhostOf(out *ir.IR, host string) *ir.VirtualHost {
	for _, vh := range out.VirtualHosts {
		if vh.Host == host {
			return vh
		}
	}
	return nil
}

// app-root is a rewrite of nginx's server, before any location is chosen:
// on a host whose paths are regular expressions (another Ingress's
// use-regex), its route stays exactly / and comes first, and a catch-all
// regular expression does not take / from it.
func TestAppRootComesFirstOnARegexHost(t *testing.T) {
	st := stateOf(t, redirectService+`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: app, namespace: default, creationTimestamp: "2026-01-01T00:00:01Z", annotations: {nginx.ingress.kubernetes.io/app-root: /app}}
spec:
  rules: [{host: a.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: regex, namespace: default, creationTimestamp: "2026-01-01T00:00:00Z", annotations: {nginx.ingress.kubernetes.io/use-regex: "true"}}
spec:
  rules: [{host: a.example.com, http: {paths: [{path: /.*, pathType: ImplementationSpecific, backend: {service: {name: svc, port: {number: 80}}}}]}}]
`)
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080}).Build(st)
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	vh := vhostOf(out, "a.example.com")
	if vh == nil || len(vh.Routes) < 2 {
		t.Fatalf("virtual host: %+v", vh)
	}
	first := vh.Routes[0]
	if first.Match.PathType != ir.PathExact || first.Match.Path != "/" || first.Action.Redirect == nil || first.Action.Redirect.Path != "/app" {
		t.Errorf("first route: %+v, want app-root's Exact / to /app", first)
	}
	for _, r := range vh.Routes[1:] {
		if r.Match.PathType != ir.PathRegex {
			t.Errorf("route %+v: every other path of the host is a regular expression", r.Match)
		}
	}
}

// from-to-www-redirect's virtual host goes when an Ingress comes to route
// the www name itself (as ingress-nginx skips the redirect), with a problem
// on the asking Ingress, and comes back when that Ingress goes: the
// incremental builds give what fresh ones do.
func TestFromToWWWYieldsToAnIngressOfTheName(t *testing.T) {
	asking := redirectService + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: apex, namespace: default, annotations: {nginx.ingress.kubernetes.io/from-to-www-redirect: "true"}}
spec:
  rules: [{host: example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}]
`
	owner := `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: www, namespace: default}
spec:
  rules: [{host: www.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}]
`
	opts := ingress.Options{HTTPPort: 8080}
	b := ingress.NewBuilder(opts)
	for i, step := range []struct {
		manifests string
		redirect  bool
	}{{asking, true}, {asking + owner, false}, {asking, true}} {
		st := stateOf(t, step.manifests)
		out := b.Build(st)
		if err := out.Validate(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		vh := vhostOf(out, "www.example.com")
		redirects := vh != nil && len(vh.Routes) == 1 && vh.Routes[0].Action.Redirect != nil &&
			*vh.Routes[0].Action.Redirect == ir.Redirect{Host: "example.com", ListenerPort: true, StripTrailingSlash: true, Code: 308}
		forwards := vh != nil && len(vh.Routes) == 1 && vh.Routes[0].Action.Forward != nil
		conflict := len(out.Problems) == 1 && out.Problems[0].Reason == "RedirectConflict" && out.Problems[0].Name == "apex"
		if step.redirect && (!redirects || len(out.Problems) != 0) || !step.redirect && (!forwards || !conflict) {
			t.Errorf("step %d: www.example.com %+v, problems %v; want the redirect %t", i, vh, out.Problems, step.redirect)
		}
		fresh, err := json.Marshal(ingress.NewBuilder(opts).Build(st))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(out); string(got) != string(fresh) {
			t.Errorf("step %d: the incremental build differs from a fresh one:\n%s\n%s", i, got, fresh)
		}
	}
}

// ssl-redirect needs a host served over HTTPS: without an HTTPS listener
// the host is served over plain HTTP, where force-ssl-redirect still
// redirects. A www name over 253 bytes gets no redirect.
func TestSSLRedirectNeedsAnHTTPSListener(t *testing.T) {
	long := strings.Repeat("a", 61) + "." + strings.Repeat("b", 61) + "." + strings.Repeat("c", 61) + "." + strings.Repeat("d", 61) + ".io" // 250 bytes
	st := stateOf(t, redirectService+`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ssl, namespace: default, annotations: {nginx.ingress.kubernetes.io/ssl-redirect: "true", nginx.ingress.kubernetes.io/from-to-www-redirect: "true"}}
spec:
  rules:
  - {host: ssl.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}
  - {host: `+long+`, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: force, namespace: default, annotations: {nginx.ingress.kubernetes.io/force-ssl-redirect: "true"}}
spec:
  rules: [{host: force.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 80}}}}]}}]
`)
	for _, https := range []uint32{0, 8443} {
		out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, HTTPSPort: https}).Build(st)
		if err := out.Validate(); err != nil {
			t.Fatalf("HTTPS port %d: %v", https, err)
		}
		ssl := vhostOf(out, "ssl.example.com").Routes[0].Policy
		if got := ssl != nil && ssl.HTTPSRedirect != nil; got != (https != 0) {
			t.Errorf("HTTPS port %d: ssl-redirect's policy %+v", https, ssl)
		}
		if force := vhostOf(out, "force.example.com").Routes[0].Policy; force == nil || force.HTTPSRedirect == nil {
			t.Errorf("HTTPS port %d: force-ssl-redirect's policy %+v", https, force)
		}
		if vhostOf(out, "www.ssl.example.com") == nil || len(out.VirtualHosts) != 4 {
			t.Errorf("HTTPS port %d: virtual hosts %d, want ssl, www.ssl, force and the long one only", https, len(out.VirtualHosts))
		}
	}
}

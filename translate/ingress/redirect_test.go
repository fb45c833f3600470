package ingress_test

import (
	"encoding/json"
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

package ingress_test

import (
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

const passthroughManifests = `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{port: 443}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: pass, namespace: default, annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true"}}
spec:
  rules:
  - host: pass.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 443}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: noroot, namespace: default, annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true"}}
spec:
  rules:
  - host: noroot.example.com
    http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: svc, port: {number: 443}}}}]}
`

func buildPassthrough(t *testing.T, enable bool) *ir.IR {
	t.Helper()
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, EnableSSLPassthrough: enable}).
		Build(stateWith(t, passthroughManifests, ingress.References))
	if err := out.Validate(); err != nil {
		t.Fatal(err)
	}
	return out
}

func passthroughProblems(m *ir.IR, name string) []string {
	var out []string
	for _, p := range m.Problems {
		if p.Name == name {
			out = append(out, p.Reason)
		}
	}
	return out
}

// Without --enable-ssl-passthrough, ingress-nginx ignores the annotation:
// here it is reported too, and the host is an ordinary one (no HTTPS
// listener without a certificate). With it, a host with a "/" path is
// passed through (the HTTPS listener is there without any certificate), a
// host without one is reported and is not, as ingress-nginx skips it.
func TestPassthroughFlag(t *testing.T) {
	off := buildPassthrough(t, false)
	if got := passthroughProblems(off, "pass"); len(got) != 1 || got[0] != "PassthroughDisabled" {
		t.Errorf("without the flag: problems %v, want PassthroughDisabled", got)
	}
	for _, vh := range off.VirtualHosts {
		if vh.Passthrough != nil {
			t.Errorf("without the flag, %s is passed through", vh.Host)
		}
	}
	if len(off.Listeners) != 1 {
		t.Errorf("without the flag or a certificate: %d listeners, want the HTTP one", len(off.Listeners))
	}

	on := buildPassthrough(t, true)
	hosts := map[string]*ir.VirtualHost{}
	for _, vh := range on.VirtualHosts {
		hosts[vh.Host] = vh
	}
	if p := hosts["pass.example.com"].Passthrough; p == nil || p.Cluster != "default/svc/443" {
		t.Errorf("pass.example.com: passthrough %+v, want to default/svc/443", p)
	}
	if hosts["noroot.example.com"].Passthrough != nil {
		t.Error("noroot.example.com has no / path but is passed through")
	}
	if got := passthroughProblems(on, "noroot"); len(got) != 1 || got[0] != "PassthroughIgnored" {
		t.Errorf("noroot: problems %v, want PassthroughIgnored", got)
	}
	if len(on.Listeners) != 2 || on.Listeners[1].Protocol != ir.HTTPS {
		t.Errorf("with a passed-through host: listeners %+v, want HTTP and HTTPS", on.Listeners)
	}
	// Plain HTTP goes to the backend over TLS: its cluster has a policy
	// with TLS, the passthrough's none.
	r := hosts["pass.example.com"].Routes[0]
	if c := r.Action.Forward.Clusters[0].Cluster; c == "default/svc/443" {
		t.Errorf("plain HTTP is sent to the passthrough's TCP cluster %s, not over TLS", c)
	}
}

// A younger Ingress cannot pass through a host another Ingress is the
// oldest of: it would take the TLS of that Ingress's paths.
func TestPassthroughOldestDecides(t *testing.T) {
	manifests := `
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: default}
spec: {ports: [{port: 443}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: owner, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  rules:
  - host: shared.example.com
    http: {paths: [{path: /app, pathType: Prefix, backend: {service: {name: svc, port: {number: 443}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: intruder, namespace: default, creationTimestamp: "2021-01-01T00:00:00Z", annotations: {nginx.ingress.kubernetes.io/ssl-passthrough: "true"}}
spec:
  rules:
  - host: shared.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: svc, port: {number: 443}}}}]}
`
	out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080, HTTPSPort: 8443, EnableSSLPassthrough: true}).
		Build(stateWith(t, manifests, ingress.References))
	for _, vh := range out.VirtualHosts {
		if vh.Passthrough != nil {
			t.Errorf("%s is passed through by its younger Ingress", vh.Host)
		}
	}
	if got := passthroughProblems(out, "intruder"); len(got) != 1 || got[0] != "PassthroughIgnored" {
		t.Errorf("intruder: problems %v, want PassthroughIgnored", got)
	}
}

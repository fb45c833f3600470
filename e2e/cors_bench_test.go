package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkCORS is the cost per request of enable-cors at the data plane:
// the same GET to the same backend through a host without CORS, one with
// ingress-nginx's default (any origin: six response headers set), one with
// a list of origins and a wildcard (a regular expression on the Origin
// picks the route that sets them) asked from an allowed origin, and the
// same asked from another origin (the regular expression fails and the
// plain route behind it answers), one keep-alive connection, one request
// at a time, rounds taking turns on one Envoy (docs/benchmarks.md, "Issue
// 15: the cost of each access filter").
//
//	go test ./e2e -run '^$' -bench BenchmarkCORS -benchtime 4000x
func BenchmarkCORS(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	list := `https://app.example.com, https://admin.example.com:8443, https://*.apps.example.org`
	ingresses := corsBenchIngress("plain", "") + corsBenchIngress("any", `{nginx.ingress.kubernetes.io/enable-cors: "true"}`) +
		corsBenchIngress("list", `{nginx.ingress.kubernetes.io/enable-cors: "true", nginx.ingress.kubernetes.io/cors-allow-origin: "`+list+`"}`)
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(b, dir, "ingresses.yaml", ingresses)
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	get := func(host, origin, wantACAO string) error {
		header, err := benchGet(client, "http://"+envoy.HTTPAddress+"/", host, http.Header{"Origin": {origin}}, http.StatusOK, "alpha")
		if err != nil {
			return err
		}
		if got := header.Get("Access-Control-Allow-Origin"); got != wantACAO {
			return fmt.Errorf("%s from %s: Access-Control-Allow-Origin %q, want %q", host, origin, got, wantACAO)
		}
		return nil
	}
	cases := []struct{ name, host, origin, acao string }{
		{"plain", "plain.example.com", "https://x.apps.example.org", ""},
		{"any-origin", "any.example.com", "https://x.apps.example.org", "*"},
		{"list-allowed", "list.example.com", "https://x.apps.example.org", "https://x.apps.example.org"},
		{"list-other", "list.example.com", "https://other.example.net", ""},
	}
	framework.Eventually(b, convergeTimeout, "every host served", func() error {
		for _, c := range cases {
			if err := get(c.host, c.origin, c.acao); err != nil {
				return err
			}
		}
		return nil
	})
	var names []string
	byName := map[string]int{}
	for i, c := range cases {
		names = append(names, c.name)
		byName[c.name] = i
	}
	benchRounds(b, names, func(name string) error {
		c := cases[byName[name]]
		return get(c.host, c.origin, c.acao)
	})
}

func corsBenchIngress(name, annotations string) string {
	if annotations == "" {
		annotations = "{}"
	}
	return fmt.Sprintf(`---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %[1]s, namespace: default, annotations: %[2]s}
spec:
  rules:
  - host: %[1]s.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`, name, annotations)
}

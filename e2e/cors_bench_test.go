package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
	for name, content := range map[string]string{"services.yaml": echoServicesYAML(alpha), "ingresses.yaml": ingresses} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	get := func(host, origin, wantACAO string) error {
		req, _ := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
		req.Host = host
		req.Header.Set("Origin", origin)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Backend") != "alpha" || resp.Header.Get("Access-Control-Allow-Origin") != wantACAO {
			return fmt.Errorf("%s from %s: status %d, Access-Control-Allow-Origin %q", host, origin, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
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
	for range 5 {
		for _, c := range cases {
			b.Run(c.name, func(b *testing.B) {
				for b.Loop() {
					if err := get(c.host, c.origin, c.acao); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
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

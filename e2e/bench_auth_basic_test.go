package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkBasicAuth measures what basic authentication costs per request
// through a real Envoy and the authorisation service beside it, in one run:
// the same backend through a host without it and through hosts with it
// (bcrypt, whose verification the service caches after the first; {SHA},
// cheap to verify at all). "serial" is one client, one request at a time
// (ns/op is the latency); "parallel" is 16 clients on keep-alive
// connections (req/s). The uncached verification is internal/authz's
// BenchmarkVerify (docs/benchmarks.md, "Issue 15: the cost of each access
// filter").
func BenchmarkBasicAuth(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	hash, err := bcrypt.GenerateFromPassword([]byte("bar"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	basic := func(secret string) map[string]string {
		return map[string]string{"auth-type": "basic", "auth-secret": secret}
	}
	files := map[string]string{
		"services.yaml": echoServicesYAML(alpha),
		"secrets.yaml": basicSecret("bcrypt", map[string]string{"auth": "foo:" + string(hash) + "\n"}) +
			basicSecret("sha", map[string]string{"auth": "foo:{SHA}Ys23Ag/5IOWqZCw9QGaVDdHwH00=\n"}),
		"ingresses.yaml": strings.Join([]string{
			basicIngress("open", "open.bench.example", nil),
			basicIngress("bcrypt", "bcrypt.bench.example", basic("bcrypt")),
			basicIngress("sha", "sha.bench.example", basic("sha")),
		}, "---\n"),
	}
	for name, content := range files {
		writeManifest(b, dir, name, content)
	}
	cp := framework.StartControlPlane(b, "--manifests", dir, "--log-level", "warn")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	credentials := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("foo:bar"))}}
	get := func(client *http.Client, host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/", host+".bench.example", credentials, http.StatusOK, "alpha")
		return err
	}
	hosts := []string{"open", "bcrypt", "sha"}
	for _, host := range hosts {
		framework.Eventually(b, convergeTimeout, host+" served", func() error {
			return get(http.DefaultClient, host)
		})
	}
	benchSerialAndParallel(b, hosts, get)
}

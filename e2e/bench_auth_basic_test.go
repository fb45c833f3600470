package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	cp := framework.StartControlPlane(b, "--manifests", dir, "--log-level", "warn")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	authorization := "Basic " + base64.StdEncoding.EncodeToString([]byte("foo:bar"))
	hosts := []string{"open", "bcrypt", "sha"}
	for _, host := range hosts {
		framework.Eventually(b, convergeTimeout, host+" served", func() error {
			return basicBenchGet(http.DefaultClient, envoy.HTTPAddress, host+".bench.example", authorization)
		})
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, host := range hosts {
			b.Run(mode+"/"+host, func(b *testing.B) {
				client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
				defer client.CloseIdleConnections()
				b.ResetTimer()
				if mode == "serial" {
					for range b.N {
						if err := basicBenchGet(client, envoy.HTTPAddress, host+".bench.example", authorization); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := basicBenchGet(client, envoy.HTTPAddress, host+".bench.example", authorization); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			})
		}
	}
}

// basicBenchGet sends GET / with the credentials and wants 200.
func basicBenchGet(client *http.Client, address, host, authorization string) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+"/", nil)
	if err != nil {
		return err
	}
	req.Host = host
	req.Header.Set("Authorization", authorization)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d", host, resp.StatusCode)
	}
	return nil
}

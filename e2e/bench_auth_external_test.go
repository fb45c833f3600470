package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkExternalAuth measures what external authentication (auth-url)
// costs per request through a real Envoy, in one run: the same backend
// without it, with it (Envoy asks the authorisation service, which asks
// the auth service, the echo backend's /auth/ in a network namespace), and
// with auth-cache-key (the service answers from its cache). "serial" is
// one client, one request at a time (ns/op is the latency); "parallel" is
// 16 clients on keep-alive connections (req/s) (docs/benchmarks.md,
// "Issue 15: the cost of each access filter").
func BenchmarkExternalAuth(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	netns := framework.NewNetns(b)
	authAddr := netns.IP + ":8080"
	framework.StartProcess(b, "auth-service", netns.Command(framework.EchoBinary(b), "-listen", authAddr+"=auth"))
	alpha := framework.StartBackend(b, "alpha")
	dir := b.TempDir()
	auth := "http://" + authAddr + "/auth/status/200"
	ingresses := strings.Join([]string{
		authIngress("open", "open.bench.example", "/", nil),
		authIngress("auth", "auth.bench.example", "/", map[string]string{"auth-url": auth}),
		authIngress("cached", "cached.bench.example", "/", map[string]string{"auth-url": auth, "auth-cache-key": "fixed", "auth-cache-duration": "200 1h"}),
	}, "---\n")
	for name, content := range map[string]string{"services.yaml": echoServicesYAML(alpha), "ingresses.yaml": ingresses} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	cp := framework.StartControlPlane(b, "--manifests", dir, "--log-level", "warn")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	for _, host := range []string{"open", "auth", "cached"} {
		framework.Eventually(b, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host+".bench.example", "/", http.StatusOK, "alpha")
		})
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, host := range []string{"open", "auth", "cached"} {
			b.Run(mode+"/"+host, func(b *testing.B) {
				client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
				defer client.CloseIdleConnections()
				b.ResetTimer()
				if mode == "serial" {
					for range b.N {
						if err := benchGet(client, envoy.HTTPAddress, host+".bench.example"); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := benchGet(client, envoy.HTTPAddress, host+".bench.example"); err != nil {
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

func benchGet(client *http.Client, address, host string) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+"/", nil)
	if err != nil {
		return err
	}
	req.Host = host
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

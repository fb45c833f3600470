package e2e

import (
	"net/http"
	"strings"
	"testing"

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
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(b, dir, "ingresses.yaml", ingresses)
	cp := framework.StartControlPlane(b, "--manifests", dir, "--log-level", "warn")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	for _, host := range []string{"open", "auth", "cached"} {
		framework.Eventually(b, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host+".bench.example", "/", http.StatusOK, "alpha")
		})
	}
	benchSerialAndParallel(b, []string{"open", "auth", "cached"}, func(client *http.Client, host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/", host+".bench.example", nil, http.StatusOK, "alpha")
		return err
	})
}

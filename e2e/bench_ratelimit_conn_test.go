package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkConnectionAndRateLimits is the cost per request of
// limit-connections (Envoy's ext_proc filter and a loopback gRPC stream to
// the authorisation service per request, held until the response's end)
// and of limit-rate (Envoy's fault filter pacing the response) at the data
// plane: the same small request to the same backend through a host with
// neither ("open"), with limit-connections high enough never to refuse
// ("connlimit"), with limit-rate high enough never to slow ("limitrate"),
// and with limit-rate-after too ("limitrate-after": the authorisation
// service answers the response's body chunks), serial and parallel (docs/benchmarks.md, "Issue 15: the cost of each
// access filter").
//
//	go test ./e2e -run '^$' -bench BenchmarkConnectionAndRateLimits -benchtime 2000x -count 3
func BenchmarkConnectionAndRateLimits(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	hosts := []struct {
		name        string
		annotations map[string]string
	}{
		{"open", nil},
		{"connlimit", map[string]string{nginxKey + "limit-connections": "1000000"}},
		{"limitrate", map[string]string{nginxKey + "limit-rate": "1000000"}},
		{"limitrate-after", map[string]string{nginxKey + "limit-rate": "1000000", nginxKey + "limit-rate-after": "1"}},
	}
	var ingresses, names []string
	for _, h := range hosts {
		ingresses = append(ingresses, accessIngress(h.name, h.name+".bench.example", "/", h.annotations))
		names = append(names, h.name)
	}
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(b, dir, "ingresses.yaml", strings.Join(ingresses, ""))
	cp := framework.StartControlPlane(b, "--manifests", dir, "--log-level", "warn")
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	get := func(client *http.Client, host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/", host+".bench.example", nil, http.StatusOK, "alpha")
		return err
	}
	plain := &http.Client{Transport: &http.Transport{Proxy: nil}}
	framework.Eventually(b, convergeTimeout, "every host served", func() error {
		for _, n := range names {
			if err := get(plain, n); err != nil {
				return err
			}
		}
		return nil
	})
	// The filters are really there (TestLimitConnections and
	// TestLimitRate show them acting).
	if dump := envoy.ConfigDump(); !strings.Contains(dump, "envoy.filters.http.ext_proc") || !strings.Contains(dump, "envoy.filters.http.fault") {
		b.Fatal("Envoy's configuration lacks the ext_proc or the fault filter")
	}
	benchSerialAndParallel(b, names, get)
}

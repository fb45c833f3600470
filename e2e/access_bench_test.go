package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkAccessFilters is the cost per request of the source ranges
// (RBAC) and the rate limit (local rate limit, a bucket per client) at the
// data plane: the same request to the same backend through a route with
// none, with each, and with both, one keep-alive connection, one request
// at a time, rounds taking turns on one Envoy (docs/benchmarks.md, "Issue
// 15: the cost of each access filter"). The limits are high enough never to
// refuse: what is measured is the check.
//
//	go test ./e2e -run '^$' -bench BenchmarkAccessFilters -benchtime 4000x
func BenchmarkAccessFilters(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	allow := map[string]string{
		nginxKey + "allowlist-source-range": "127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 2001:db8::/32",
		nginxKey + "denylist-source-range":  "10.1.0.0/16, 127.0.0.2",
	}
	limit := map[string]string{nginxKey + "limit-rps": "1000000"}
	exempt := map[string]string{nginxKey + "limit-rps": "1000000", nginxKey + "limit-allowlist": "127.0.0.1"}
	both := map[string]string{}
	for k, v := range allow {
		both[k] = v
	}
	both[nginxKey+"limit-rps"] = "1000000"
	hosts := []struct {
		name        string
		annotations map[string]string
	}{{"plain", nil}, {"rbac", allow}, {"ratelimit", limit}, {"ratelimit-exempt", exempt}, {"rbac-and-ratelimit", both}}
	var ingresses []string
	for _, h := range hosts {
		ingresses = append(ingresses, accessIngress(h.name, h.name+".example.com", "/", h.annotations))
	}
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(b, dir, "ingresses.yaml", strings.Join(ingresses, ""))
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	envoy := framework.StartEnvoy(b, cp)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	get := func(host string) error {
		_, err := benchGet(client, "http://"+envoy.HTTPAddress+"/", host, nil, http.StatusOK, "alpha")
		return err
	}
	framework.Eventually(b, convergeTimeout, "every host served", func() error {
		for _, h := range hosts {
			if err := get(h.name + ".example.com"); err != nil {
				return err
			}
		}
		return nil
	})
	// The filters are really there: a refused client and an exhausted
	// bucket would be answered by them (TestSourceRanges, TestRateLimits).
	if dump := envoy.ConfigDump(); !strings.Contains(dump, "envoy.filters.http.local_ratelimit") || !strings.Contains(dump, "envoy.filters.http.rbac") {
		b.Fatal("Envoy's configuration lacks the RBAC or the rate limit filter")
	}
	var names []string
	for _, h := range hosts {
		names = append(names, h.name)
	}
	benchRounds(b, names, func(name string) error { return get(name + ".example.com") })
}

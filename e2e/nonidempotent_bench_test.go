package e2e

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// BenchmarkNonIdempotentFilter is the price per request of the listener's
// method check that retries POST, LOCK and PATCH only when they were not
// sent, giving every other method the conditions it is retried on once
// sent (translate/envoy/nonidempotent.go, issue 31), in one Envoy of the
// shipped defaults: a host of default retries, where every request goes
// through the check, against one whose Ingress retries every method
// (proxy-next-upstream's non_idempotent), whose routes switch the filter
// off. Same Envoy, same backend, the hosts in turn, so what the machine
// does in between falls on both. Envoy runs on the second core alone
// (taskset), wrk and the backend on the first. Debian's wrk, GET and
// POST, rounds of wrkSeconds; reported per case, the median over the
// rounds: requests per second, the 99th percentile and Envoy's CPU time
// per request from /proc; and per method the median over the rounds of
// each measure's ratio, checked over unchecked. Against a build before
// the filter (INGRESS_XDS_BINARY), the checked host pays its route's
// method matcher instead, which Envoy's router matches on every request
// (docs/benchmarks.md, "Issue 31: the price of one method check per
// listener").
//
//	bash hack/install-tools.sh wrk
//	go test ./e2e -run '^$' -bench BenchmarkNonIdempotentFilter -benchtime 1x
func BenchmarkNonIdempotentFilter(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	wrk := toolOrSkip(b, "wrk", "bash hack/install-tools.sh wrk")
	taskset := toolOrSkip(b, "taskset", "util-linux")
	alpha := framework.StartBackend(b, "alpha")
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(b, dir, "ingresses.yaml", hostIngressYAML("checked", "checked.bench.test", "alpha", "")+"---\n"+
		retryAllIngressYAML("unchecked", "unchecked.bench.test", "alpha"))
	post := filepath.Join(dir, "post.lua")
	if err := os.WriteFile(post, []byte("wrk.method = \"POST\"\nwrk.body = \"x\"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cp := framework.StartControlPlane(b, "--manifests", dir)
	cp.WaitReady(b)
	e := framework.StartEnvoyWith(b, cp, framework.EnvoyOptions{Delta: true})
	hosts := []string{"checked.bench.test", "unchecked.bench.test"}
	for _, h := range hosts {
		framework.Eventually(b, convergeTimeout, "serving "+h, func() error { return e.Expect(h, "/", 200, "alpha") })
	}
	// Envoy on the second core; this process (the backend) and wrk on
	// the first.
	for pid, cpu := range map[int]string{e.Process.Pid(): "1", os.Getpid(): "0"} {
		if out, err := exec.Command(taskset, "-a", "-p", "-c", cpu, strconv.Itoa(pid)).CombinedOutput(); err != nil {
			b.Fatalf("taskset: %v\n%s", err, out)
		}
	}
	const rounds, wrkSeconds = 12, 5
	samples := map[string][]wrkSample{}
	for round := range rounds {
		for _, method := range []string{"GET", "POST"} {
			order := slices.Clone(hosts)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, h := range order {
				command := []string{taskset, "-c", "0", wrk, "-t1", "-c8", "-d" + strconv.Itoa(wrkSeconds) + "s", "--latency", "-H", "Host: " + h}
				if method == "POST" {
					command = append(command, "-s", post)
				}
				key := method + "/" + strings.SplitN(h, ".", 2)[0]
				samples[key] = append(samples[key], runWrk(b, e.Process.Pid(), key, append(command, "http://"+e.HTTPAddress+"/")...))
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(samples)) {
		reportWrk(b, key, samples[key])
	}
	// The two hosts of a round ran one after the other: the median of
	// their ratios, round by round, leaves out what drifts over minutes.
	for _, method := range []string{"GET", "POST"} {
		checked, unchecked := samples[method+"/checked"], samples[method+"/unchecked"]
		ratio := func(f func(wrkSample) float64) float64 {
			r := make([]float64, len(checked))
			for i := range checked {
				r[i] = f(checked[i]) / f(unchecked[i])
			}
			return median(r, func(x float64) float64 { return x })
		}
		b.Run(method+"/checked-over-unchecked", func(b *testing.B) {
			b.ReportMetric(ratio(func(x wrkSample) float64 { return x.rps }), "req/s-ratio")
			b.ReportMetric(ratio(func(x wrkSample) float64 { return x.p99ms }), "p99-ratio")
			b.ReportMetric(ratio(func(x wrkSample) float64 { return x.cpuUS }), "CPU-ratio")
		})
	}
}

// retryAllIngressYAML is a host whose Ingress retries every method, as
// ingress-nginx does with non_idempotent in proxy-next-upstream.
func retryAllIngressYAML(name, host, service string) string {
	return strings.Replace(hostIngressYAML(name, host, service, ""), "namespace: default\n",
		"namespace: default\n  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: \"error timeout non_idempotent\"}\n", 1)
}

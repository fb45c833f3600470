package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/e2e/load"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
)

// toolOrSkip is the path of a command the benchmark drives, or skips it
// saying where the command comes from.
func toolOrSkip(b *testing.B, name, from string) string {
	b.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		b.Skipf("%s is not installed (%s)", name, from)
	}
	return path
}

// BenchmarkShippedDefaults is the price per request of what the shipped
// defaults turn on (issue 31): delta xDS with on-demand clusters (each
// listener's on_demand filter) and, past envoy.AutoRouteScopesFrom hosts,
// route scopes (the hash of each request's Host). Envoys of one machine,
// each fed by a control plane of its own with the same
// envoy.AutoRouteScopesFrom hosts and one annotated host, all to one echo
// backend: "before" is a SotW Envoy with one route configuration and every
// cluster (serve --route-scopes 0 --on-demand-clusters=false, bootstrap
// --delta=false), "below-the-line" the defaults with fewer hosts than
// envoy.AutoRouteScopesFrom (delta, on-demand clusters, no scopes, the
// virtual hosts over VHDS), "below-the-line-without-vhds" the same with
// the route configuration whole (serve --delta-vhds=false),
// "shipped" the defaults (the same with envoy.AutoRouteScopes(hosts)
// scopes), "1024-scopes" the defaults with the number of scopes 20,000
// hosts get. Debian's wrk drives each in turn
// (rounds of wrkSeconds, one connection per wrk thread's share of 8,
// keep-alive), on a plain route and on an annotated one; reported per
// case, the median over the rounds: wrk's requests per second and 99th
// percentile, and Envoy's CPU time per request from /proc
// (docs/benchmarks.md, "Issue 31: the shipped defaults").
//
//	bash hack/install-tools.sh wrk
//	go test ./e2e -run '^$' -bench BenchmarkShippedDefaults -benchtime 1x
func BenchmarkShippedDefaults(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	wrk := toolOrSkip(b, "wrk", "bash hack/install-tools.sh wrk")
	alpha := framework.StartBackend(b, "alpha")
	dir := b.TempDir()
	writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
	hosts := envoy.AutoRouteScopesFrom
	ingresses := []string{annotatedBenchIngressYAML()}
	for i := range hosts {
		ingresses = append(ingresses, hostIngressYAML(fmt.Sprintf("h%d", i), scopedHost(i), "alpha", ""))
	}
	writeManifest(b, dir, "ingresses.yaml", strings.Join(ingresses, "---\n"))
	type setup struct {
		name  string
		serve []string
		envoy framework.EnvoyOptions
	}
	setups := []setup{
		{"before", []string{"--route-scopes", "0", "--on-demand-clusters=false"}, framework.EnvoyOptions{SotW: true}},
		{"below-the-line-without-vhds", []string{"--route-scopes", "0", "--delta-vhds=false"}, framework.EnvoyOptions{Delta: true}},
		{"below-the-line", []string{"--route-scopes", "0"}, framework.EnvoyOptions{Delta: true}},
		{"shipped", nil, framework.EnvoyOptions{Delta: true}},
		{"1024-scopes", []string{"--route-scopes", "1024"}, framework.EnvoyOptions{Delta: true}},
	}
	envoys := map[string]*framework.Envoy{}
	for _, s := range setups {
		cp := framework.StartControlPlane(b, append([]string{"--manifests", dir}, s.serve...)...)
		cp.WaitReady(b)
		envoys[s.name] = framework.StartEnvoyWith(b, cp, s.envoy)
	}
	routes := []struct{ name, host, path string }{
		{"plain", scopedHost(hosts / 2), "/"},
		{"annotated", annotatedBenchHost, "/app/x"},
	}
	for _, s := range setups {
		for _, r := range routes {
			framework.Eventually(b, convergeTimeout, s.name+" serving "+r.name, func() error {
				return envoys[s.name].Expect(r.host, r.path, 200, "alpha")
			})
		}
	}
	if n := envoys["shipped"].ConfigDump(); !strings.Contains(n, "scoped_routes") {
		b.Fatal("the shipped defaults made no route scopes at the line")
	}
	const rounds, wrkSeconds = 5, 8
	samples := map[string][]wrkSample{}
	for round := range rounds {
		for _, r := range routes {
			order := slices.Clone(setups)
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, s := range order {
				e := envoys[s.name]
				key := r.name + "/" + s.name
				samples[key] = append(samples[key], runWrk(b, e.Process.Pid(), key, wrk, "-t2", "-c8", "-d"+strconv.Itoa(wrkSeconds)+"s", "--latency",
					"-H", "Host: "+r.host, "http://"+e.HTTPAddress+r.path))
			}
		}
	}
	for _, r := range routes {
		for _, s := range setups {
			reportWrk(b, r.name+"/"+s.name, samples[r.name+"/"+s.name])
		}
	}
}

// wrkSample is one wrk run: its requests per second and 99th percentile,
// and the CPU time per request of the process measured over it.
type wrkSample struct{ rps, p99ms, cpuUS float64 }

// runWrk runs the command (wrk and its arguments, or a wrapper of it)
// and measures it, with the CPU time process pid spent over it. A failed
// or non-2xx request fails the benchmark.
func runWrk(b *testing.B, pid int, name string, command ...string) wrkSample {
	b.Helper()
	before, err := load.ReadProcStat(pid)
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command(command[0], command[1:]...).CombinedOutput()
	if err != nil {
		b.Fatalf("wrk: %v\n%s", err, out)
	}
	after, err := load.ReadProcStat(pid)
	if err != nil {
		b.Fatal(err)
	}
	w, err := parseWrk(out)
	if err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	if w.errors > 0 {
		b.Fatalf("%s: %d non-2xx or failed requests\n%s", name, w.errors, out)
	}
	return wrkSample{w.rps, w.p99ms, (after.CPUSeconds - before.CPUSeconds) / float64(w.requests) * 1e6}
}

// reportWrk reports, as the sub-benchmark name, the median over the
// samples of each measure.
func reportWrk(b *testing.B, name string, samples []wrkSample) {
	b.Run(name, func(b *testing.B) {
		b.ReportMetric(median(samples, func(x wrkSample) float64 { return x.rps }), "req/s")
		b.ReportMetric(median(samples, func(x wrkSample) float64 { return x.p99ms }), "p99-ms")
		b.ReportMetric(median(samples, func(x wrkSample) float64 { return x.cpuUS }), "envoy-CPU-µs/req")
	})
}

func median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

const annotatedBenchHost = "annotated.bench.test"

// annotatedBenchIngressYAML is a host whose route carries what an
// ingress-nginx Ingress often does: a rewrite, CORS, a read timeout and a
// snippet's response header.
func annotatedBenchIngressYAML() string {
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: annotated
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /$2
    nginx.ingress.kubernetes.io/use-regex: "true"
    nginx.ingress.kubernetes.io/enable-cors: "true"
    nginx.ingress.kubernetes.io/proxy-read-timeout: "30"
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-Served-By: bench";
spec:
  ingressClassName: ingress-xds
  rules:
  - host: %s
    http:
      paths:
      - {path: /app(/|$)(.*), pathType: ImplementationSpecific, backend: {service: {name: alpha, port: {number: 80}}}}
`, annotatedBenchHost)
}

// wrkResult is what wrk --latency prints that the benchmark reads.
type wrkResult struct {
	requests, errors int
	rps, p99ms       float64
}

// parseWrk reads wrk's report: "N requests in", "Non-2xx or 3xx
// responses: N", "Socket errors: ...", "Requests/sec: X" and the latency
// distribution's "99% X" (us, ms or s).
func parseWrk(out []byte) (wrkResult, error) {
	var r wrkResult
	var haveRPS, haveP99 bool
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			r.requests, _ = strconv.Atoi(f[0])
		case len(f) == 2 && f[0] == "Requests/sec:":
			r.rps, _ = strconv.ParseFloat(f[1], 64)
			haveRPS = true
		case len(f) == 2 && f[0] == "99%":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				return r, fmt.Errorf("wrk's 99%%: %w", err)
			}
			r.p99ms, haveP99 = float64(d)/float64(time.Millisecond), true
		case len(f) >= 5 && f[0] == "Non-2xx":
			n, _ := strconv.Atoi(f[len(f)-1])
			r.errors += n
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.Atoi(strings.TrimSuffix(f[i+1], ","))
				r.errors += n
			}
		}
	}
	if !haveRPS || !haveP99 || r.requests == 0 {
		return r, fmt.Errorf("wrk's report lacks requests, Requests/sec or the 99%% latency")
	}
	return r, nil
}

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/e2e/load"
)

// benchGet sends one request of a data-plane benchmark through Envoy and
// checks its answer: the status, and, when backend is not empty, that the
// backend of that name answered. The body is read to its end, so that a
// keep-alive connection is used again. It returns the response's header
// for checks of a benchmark's own.
func benchGet(client *http.Client, url, host string, header http.Header, status int, backend string) (http.Header, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Host = host
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || backend != "" && resp.Header.Get("X-Backend") != backend {
		return resp.Header, fmt.Errorf("%s %s: status %d from %q, want %d from %q", host, url, resp.StatusCode, resp.Header.Get("X-Backend"), status, backend)
	}
	return resp.Header, nil
}

// benchRounds runs each case's request as a sub-benchmark, one request at
// a time, in five rounds taking turns on the same Envoy, so that a machine
// whose speed drifts slows every case alike and each round gives ratios
// taken within the same minute (docs/benchmarks.md reads them so).
func benchRounds(b *testing.B, names []string, send func(name string) error) {
	b.Helper()
	for range 5 {
		for _, name := range names {
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if err := send(name); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSerialAndParallel runs each case's request as a sub-benchmark one
// at a time ("serial/<name>") and then from eight goroutines per CPU
// ("parallel/<name>"), each with a client of its own whose connections are
// kept alive, and reports requests per second.
func benchSerialAndParallel(b *testing.B, names []string, send func(client *http.Client, name string) error) {
	b.Helper()
	benchSerialAndParallelCPU(b, names, nil, send)
}

// benchSerialAndParallelCPU is benchSerialAndParallel that also reports
// the CPU time per request of each case's process in servers (an Envoy),
// read from /proc: unlike requests per second, which count the client's
// and the backend's share of the machine too, it is the server's own
// cost of a request.
func benchSerialAndParallelCPU(b *testing.B, names []string, servers map[string]*framework.Process, send func(client *http.Client, name string) error) {
	b.Helper()
	benchSerialAndParallelSidecarCPU(b, names, servers, nil, send)
}

// benchSerialAndParallelSidecarCPU is benchSerialAndParallelCPU that
// also reports the CPU time per request of each case's process in
// sidecars (the authorisation service beside the Envoy), read the same
// way ("sidecar-CPU-µs/req"). What the sidecar is sent after the last
// request (an access log batch still in Envoy's buffer) is not counted.
func benchSerialAndParallelSidecarCPU(b *testing.B, names []string, servers, sidecars map[string]*framework.Process, send func(client *http.Client, name string) error) {
	b.Helper()
	cpuOf := func(b *testing.B, servers map[string]*framework.Process, name string) float64 {
		p, ok := servers[name]
		if !ok {
			return 0
		}
		st, err := load.ReadProcStat(p.Pid())
		if err != nil {
			b.Fatal(err)
		}
		return st.CPUSeconds
	}
	cpu := func(b *testing.B, name string) float64 { return cpuOf(b, servers, name) }
	for _, mode := range []string{"serial", "parallel"} {
		for _, name := range names {
			b.Run(mode+"/"+name, func(b *testing.B) {
				client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}
				defer client.CloseIdleConnections()
				before, sidecarBefore := cpu(b, name), cpuOf(b, sidecars, name)
				b.ResetTimer()
				if mode == "serial" {
					for range b.N {
						if err := send(client, name); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(8)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := send(client, name); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
				if _, ok := servers[name]; ok {
					b.ReportMetric((cpu(b, name)-before)/float64(b.N)*1e6, "server-CPU-µs/req")
				}
				if _, ok := sidecars[name]; ok {
					b.ReportMetric((cpuOf(b, sidecars, name)-sidecarBefore)/float64(b.N)*1e6, "sidecar-CPU-µs/req")
				}
			})
		}
	}
}

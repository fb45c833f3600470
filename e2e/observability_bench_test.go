package e2e

import (
	"net"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/translate/ingress/configmap"
)

// simpleFormat is an access log format of Envoy's plain operators.
const simpleFormat = `$remote_addr - [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" $upstream_addr $req_id`

// noCELFormat is ingress-nginx's default format without $request_time,
// $proxy_upstream_name, $proxy_alternative_upstream_name,
// $upstream_response_length and $upstream_status, whose Envoy forms are
// CEL expressions.
const noCELFormat = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" ` +
	`$request_length $upstream_addr $upstream_response_time $req_id`

// BenchmarkObservability is the cost per request of ingress-nginx's
// access log and of tracing at the data plane: the same GET to the same
// backend through three Envoys, each of its own control plane whose
// controller ConfigMap asks for nothing, for an access log of plain
// operators (every request, then with the filter), for the access log in
// ingress-nginx's default format (route metadata, the CEL formatter for
// $request_time and $proxy_alternative_upstream_name, the CEL filter that
// leaves unknown hosts out; Envoy's standard output read by the test's
// process), for every request traced to a real OTLP receiver, or for
// ingress-nginx's request metrics (serve --request-metrics: Envoy's gRPC
// access log to the authorisation service, which counts them); one
// request at a time, then from eight goroutines per CPU, with each Envoy's
// CPU time per request (docs/benchmarks.md, "Issue 29: the access log and
// tracing", and "Issue 29: the request metrics").
//
//	go test ./e2e -run '^$' -bench BenchmarkObservability -benchtime 4000x
func BenchmarkObservability(b *testing.B) {
	framework.Heavy(b)
	framework.FindTools(b)
	alpha := framework.StartBackend(b, "alpha")
	otlp := startOTLPReceiverOn(b, "127.0.0.1:0")
	host, port, _ := net.SplitHostPort(otlp.address)
	configs := map[string]map[string]string{
		"plain": {},
		// A format of operators alone, every request logged: Envoy's
		// access log itself.
		"log-simple": {"log-format-upstream": simpleFormat, "enable-access-log-for-default-backend": "true"},
		// The same, with the CEL filter that leaves unknown hosts out.
		"log-filtered": {"log-format-upstream": simpleFormat},
		// ingress-nginx's default format without its five variables that
		// are CEL expressions.
		"log-no-cel": {"log-format-upstream": noCELFormat},
		// ingress-nginx's default format: route metadata and CEL.
		"accesslog": {"log-format-upstream": configmap.DefaultLogFormat},
		"tracing":   {"enable-opentelemetry": "true", "otlp-collector-host": host, "otlp-collector-port": port},
		// ingress-nginx's request metrics (serve --request-metrics):
		// every request's entry over gRPC to the authorisation service.
		"request-metrics": {},
	}
	flags := map[string][]string{"request-metrics": {"--request-metrics"}}
	names := []string{"plain", "log-simple", "log-filtered", "log-no-cel", "accesslog", "tracing", "request-metrics"}
	envoys := map[string]*framework.Envoy{}
	servers := map[string]*framework.Process{}
	sidecars := map[string]*framework.Process{}
	for _, name := range names {
		dir := b.TempDir()
		writeManifest(b, dir, "services.yaml", echoServicesYAML(alpha))
		writeManifest(b, dir, "ingresses.yaml", corsBenchIngress("plain", ""))
		writeManifest(b, dir, "configmap.yaml", controllerConfigMapYAML(configs[name]))
		cp := framework.StartControlPlane(b, append([]string{"--manifests", dir, "--configmap", "ingress-nginx/ingress-nginx-controller"}, flags[name]...)...)
		cp.WaitReady(b)
		envoys[name] = framework.StartEnvoy(b, cp)
		servers[name] = envoys[name].Process
		if len(flags[name]) > 0 {
			sidecars[name] = cp.Authz // the request metrics' receiver
		}
	}
	get := func(client *http.Client, name string) error {
		_, err := benchGet(client, "http://"+envoys[name].HTTPAddress+"/", "plain.example.com", nil, http.StatusOK, "alpha")
		return err
	}
	warm := &http.Client{Transport: &http.Transport{Proxy: nil}}
	for _, name := range names {
		framework.Eventually(b, convergeTimeout, name+" served", func() error { return get(warm, name) })
	}
	benchSerialAndParallelSidecarCPU(b, names, servers, sidecars, get)
}

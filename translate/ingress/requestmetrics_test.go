package ingress_test

import (
	"path/filepath"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate/envoy"
	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// TestGoldenRequestMetrics is the canary case (../testdata/canary.yaml)
// under serve --request-metrics: the listeners send the request metrics,
// and every route of an Ingress path names its Ingress, Service, path as
// written and, where a canary may take it, the canary's cluster and
// upstream (ingress-nginx's $namespace, $ingress_name, $service_name,
// $location_path and $proxy_alternative_upstream_name, which its
// monitor.lua sends its collector). Its golden, testdata/request-metrics.json,
// is also the renderer's case, rendered and validated by a real Envoy.
func TestGoldenRequestMetrics(t *testing.T) {
	opts := goldenOptions
	opts.RequestMetrics = true
	st, err := kube.LoadStateWith(filepath.Join("..", "testdata", "canary.yaml"), kube.ClassFilter{WatchClassless: true}, ingress.WithConfigMap(ingress.References, opts.ConfigMap))
	if err != nil {
		t.Fatal(err)
	}
	out := ingress.NewBuilder(opts).Build(st)
	if err := out.Validate(); err != nil {
		t.Errorf("the IR breaks its contract: %v", err)
	}
	got, err := envoy.IndentJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "request-metrics.json"), got)
}

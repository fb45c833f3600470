package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
)

// dashboardPanel is one PromQL expression of a panel of ingress-nginx's
// Grafana dashboards, as the dashboard writes it (template variables
// included); why, when set, says why it returns no series here.
type dashboardPanel struct {
	dashboard, title, expr, why string
}

// ingressNginxDashboards are the panels' expressions of ingress-nginx's
// two dashboards, deploy/grafana/dashboards/nginx.json and
// request-handling-performance.json of kubernetes/ingress-nginx (at
// controller v1.15.1), whitespace folded.
var ingressNginxDashboards = []dashboardPanel{
	{"nginx", "Controller Request Volume", `round(sum(irate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace"}[2m])), 0.001)`, ""},
	{"nginx", "Controller Connections", `sum(avg_over_time(nginx_ingress_controller_nginx_process_connections{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",state="active"}[2m]))`, "nginx_process_* are left out (docs/observability.md)"},
	{"nginx", "Controller Success Rate (non-4|5xx responses)", `sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace",status!~"[4-5].*"}[2m])) / sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace"}[2m]))`, ""},
	{"nginx", "Config Reloads", `avg(irate(nginx_ingress_controller_success{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace"}[1m])) * 60`, ""},
	{"nginx", "Last Config Failed", `count(nginx_ingress_controller_config_last_reload_successful{controller_pod=~"$controller",controller_namespace=~"$namespace"} == 0)`, "no configuration failed: count() of nothing, as on ingress-nginx"},
	{"nginx", "Ingress Request Volume", `round(sum(irate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",exported_namespace=~"$exported_namespace",ingress=~"$ingress"}[2m])) by (ingress), 0.001)`, ""},
	{"nginx", "Ingress Success Rate (non-4|5xx responses)", `sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace",exported_namespace=~"$exported_namespace",ingress=~"$ingress",status!~"[4-5].*"}[2m])) by (ingress) / sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace",exported_namespace=~"$exported_namespace",ingress=~"$ingress"}[2m])) by (ingress)`, ""},
	{"nginx", "Network I/O pressure (in)", `sum (irate (nginx_ingress_controller_request_size_sum{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace"}[2m]))`, ""},
	{"nginx", "Network I/O pressure (out)", `- sum (irate (nginx_ingress_controller_response_size_sum{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace"}[2m]))`, ""},
	{"nginx", "Average Memory Usage", `avg(nginx_ingress_controller_nginx_process_resident_memory_bytes{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace"})`, "nginx_process_* are left out (docs/observability.md)"},
	{"nginx", "Average CPU Usage", `avg (rate (nginx_ingress_controller_nginx_process_cpu_seconds_total{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace"}[2m]))`, "nginx_process_* are left out (docs/observability.md)"},
	{"nginx", "Ingress Percentile Response Times (p50)", `histogram_quantile(0.50, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le, ingress))`, ""},
	{"nginx", "Ingress Percentile Response Times (p90)", `histogram_quantile(0.90, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le, ingress))`, ""},
	{"nginx", "Ingress Percentile Response Times (p99)", `histogram_quantile(0.99, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le, ingress))`, ""},
	{"nginx", "Ingress Transfer Rates (in)", `sum(irate(nginx_ingress_controller_request_size_sum{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (ingress)`, ""},
	{"nginx", "Ingress Transfer Rates (out)", `sum(irate(nginx_ingress_controller_response_size_sum{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (ingress)`, ""},
	{"nginx", "Ingress Percentile Response Times (Ingress Namespaces) p80", `histogram_quantile(0.80, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le))`, ""},
	{"nginx", "Ingress Percentile Response Times (Ingress Namespaces) p90", `histogram_quantile(0.90, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le))`, ""},
	{"nginx", "Ingress Percentile Response Times (Ingress Namespaces) p99", `histogram_quantile(0.99, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le))`, ""},
	{"nginx", "Ingress Request Latency Heatmap (Ingress Namespaces)", `sum(increase(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le)`, ""},
	{"nginx", "Ingress Certificate Expiry", `avg(nginx_ingress_controller_ssl_expire_time_seconds{kubernetes_pod_name=~"$controller",namespace=~"$namespace",ingress=~"$ingress"}) by (host) - time()`, ""},

	{"request-handling-performance", "Request Latency Percentiles (p50)", `histogram_quantile(0.5, sum by (le)(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Request Latency Percentiles (p95)", `histogram_quantile(0.95, sum by (le)(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Request Latency Percentiles (p99)", `histogram_quantile(0.99, sum by (le)(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Upstream Response Latency Percentiles (p50)", `histogram_quantile(0.5, sum by (le)(rate(nginx_ingress_controller_response_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Upstream Response Latency Percentiles (p95)", `histogram_quantile(0.95, sum by (le)(rate(nginx_ingress_controller_response_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Upstream Response Latency Percentiles (p99)", `histogram_quantile(0.99, sum by (le)(rate(nginx_ingress_controller_response_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Request Rate by Method and Path", `sum by (method, host, path)(rate(nginx_ingress_controller_request_duration_seconds_count{ingress =~ "$ingress"}[5m]))`, ""},
	{"request-handling-performance", "Median Upstream Response Time by Method and Path", `histogram_quantile(.5, sum by (le, method, host, path)(rate(nginx_ingress_controller_response_duration_seconds_bucket{ingress =~ "$ingress"}[5m])))`, ""},
	{"request-handling-performance", "Response Error Rate by Method and Path", `sum by (method, host, path) (rate(nginx_ingress_controller_request_duration_seconds_count{ingress =~ "$ingress", status =~ "[4-5].*"}[5m])) / sum by (method, host, path) (rate(nginx_ingress_controller_request_duration_seconds_count{ingress =~ "$ingress", }[5m]))`, ""},
	{"request-handling-performance", "Upstream Response Time by Method and Path", `sum by (method, host, path) (rate(nginx_ingress_controller_response_duration_seconds_sum{ingress =~ "$ingress"}[5m]))`, ""},
	{"request-handling-performance", "Response Error Rate by Method and Path (by status)", `sum (rate(nginx_ingress_controller_request_duration_seconds_count{ingress =~ "$ingress", status =~"[4-5].*", }[5m])) by(method, host, path, status)`, ""},
	{"request-handling-performance", "Average Response Size by Method and Path", `sum (rate (nginx_ingress_controller_response_size_sum {ingress =~ "$ingress", }[5m])) by (method, host, path) / sum (rate(nginx_ingress_controller_response_size_count {ingress =~ "$ingress", }[5m])) by (method, host, path)`, ""},
	{"request-handling-performance", "Average Response Size by Method and Path (buckets)", `sum (rate(nginx_ingress_controller_response_size_bucket{ingress =~ "$ingress", }[5m])) by (le)`, ""},
}

// dashboardRequests is one round of the dashboard test's traffic: each
// request, how many times, its ingress, method, host, path as written
// and status; an empty ingress is a host no Ingress serves.
var dashboardRequests = []struct {
	request                             string
	times                               int
	ingress, method, host, path, status string
}{
	{"GET /cart HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 3, "shop", "GET", "shop.example.com", "/", "200"},
	{"POST /cart?status=503 HTTP/1.1\r\nHost: shop.example.com\r\nContent-Length: 0\r\n\r\n", 1, "shop", "POST", "shop.example.com", "/", "503"},
	{"GET /cart HTTP/1.1\r\nHost: shop.example.com\r\nX-Canary: always\r\n\r\n", 2, "shop", "GET", "shop.example.com", "/", "200"},
	{"GET /api/items?status=404 HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 2, "shop", "GET", "shop.example.com", "/api", "404"},
	{"PUT /posts HTTP/1.1\r\nHost: blog.example.com\r\nContent-Length: 5\r\n\r\nhello", 3, "blog", "PUT", "blog.example.com", "/posts", "200"},
	{"DELETE /posts?status=500 HTTP/1.1\r\nHost: blog.example.com\r\n\r\n", 1, "blog", "DELETE", "blog.example.com", "/posts", "500"},
	{"GET / HTTP/1.1\r\nHost: nobody.example.com\r\n\r\n", 1, "", "GET", "nobody.example.com", "", "404"},
}

// TestIngressNginxDashboards is issue 29's dashboard test: known traffic
// through a real Envoy under serve --request-metrics (two Ingresses, a
// canary, several methods and statuses), two scrapes of both /metrics
// (the control plane's and the authorisation service's) 30 s apart in
// Prometheus's time, each round of traffic the same, stored as
// Prometheus stores them (a kubernetes_sd target's labels added, the
// clashing namespace label kept as exported_namespace, as honor_labels
// false does), and every panel expression of ingress-nginx's two
// dashboards, template variables filled in, evaluated by Prometheus's
// own query engine. Every panel returns series but those whose metrics
// are left out (said by each), and the request volumes and status splits
// equal what was sent.
func TestIngressNginxDashboards(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta", "gamma")
	const podNamespace, podName = "ingress-nginx", "ingress-nginx-controller-abcde"
	t.Setenv("POD_NAMESPACE", podNamespace)
	t.Setenv("POD_NAME", podName)
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	secure := ca.Issue(t, "secure", "secure.example.com")
	fm := startFileModeWith(t, []string{"--request-metrics"},
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"secrets.yaml", tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM)},
		manifest{"ingresses.yaml", requestMetricsIngressesYAML + `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: secure, namespace: default}
spec:
  tls: [{hosts: [secure.example.com], secretName: secure-cert}]
  rules:
  - host: secure.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`})
	cp, envoy := fm.cp, fm.envoy
	for _, c := range []struct{ host, path, backend string }{{"shop.example.com", "/", "alpha"}, {"shop.example.com", "/api/x", "gamma"}, {"blog.example.com", "/posts", "gamma"}} {
		framework.Eventually(t, convergeTimeout, c.host+c.path+" served", func() error {
			return envoy.Expect(c.host, c.path, http.StatusOK, c.backend)
		})
	}

	var round []string
	counted := 0.0
	for _, r := range dashboardRequests {
		for range r.times {
			round = append(round, r.request)
		}
		if r.ingress != "" {
			counted += float64(r.times)
		}
	}
	// Each round is sent, then both endpoints scraped once the
	// authorisation service has counted all of it (Envoy sends its
	// entries in batches).
	store := &memStorage{}
	start := time.Unix(1_800_000_000, 0)
	step := 30 * time.Second
	for i := range 2 {
		before := totalRequests(t, cp)
		if _, err := rawExchange(envoy.HTTPAddress, round); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(t, convergeTimeout, fmt.Sprintf("round %d counted", i+1), func() error {
			if got := totalRequests(t, cp); got < before+counted {
				return fmt.Errorf("%v of %v counted", got-before, counted)
			}
			return nil
		})
		at := start.Add(time.Duration(i) * step)
		for _, target := range []struct{ job, address string }{{"ingress-xds", cp.MetricsAddress}, {"envoy", cp.AuthzMetricsAddress}} {
			mfs, err := scrapeFamilies(target.address)
			if err != nil {
				t.Fatal(err)
			}
			samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, familyList(mfs)...)
			if err != nil {
				t.Fatal(err)
			}
			// The target's labels, as Prometheus's kubernetes-pods job
			// (and ingress-nginx's chart's scrape annotations) give them.
			targetLabels := map[string]string{"job": target.job, "instance": target.address, "namespace": podNamespace, "pod": podName, "kubernetes_pod_name": podName}
			for _, s := range samples {
				ls := map[string]string{}
				for k, v := range s.Metric {
					name := string(k)
					if _, clash := targetLabels[name]; clash {
						name = "exported_" + name
					}
					ls[name] = string(v)
				}
				for k, v := range targetLabels {
					ls[k] = v
				}
				store.add(labels.FromMap(ls), int64(s.Timestamp), float64(s.Value))
			}
		}
	}

	// The template variables as Grafana fills them from the dashboards'
	// label_values queries; "All" is ".*".
	vars := strings.NewReplacer(
		"$controller_class", kube.DefaultControllerName,
		"$controller", podName,
		"$exported_namespace", "default",
		"$namespace", podNamespace,
		"$ingress", ".*",
	)
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute})
	at := start.Add(step)
	eval := func(expr string) promql.Vector {
		t.Helper()
		q, err := engine.NewInstantQuery(context.Background(), store, nil, vars.Replace(expr), at)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer q.Close()
		res := q.Exec(context.Background())
		if res.Err != nil {
			t.Fatalf("%s: %v", expr, res.Err)
		}
		v, err := res.Vector()
		if err != nil {
			if s, serr := res.Scalar(); serr == nil {
				return promql.Vector{{F: s.V}}
			}
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	results := map[string]promql.Vector{}
	for _, p := range ingressNginxDashboards {
		v := eval(p.expr)
		results[p.title] = v
		switch {
		case p.why == "" && len(v) == 0:
			t.Errorf("%s: panel %q returns no series: %s", p.dashboard, p.title, vars.Replace(p.expr))
		case p.why != "" && len(v) > 0:
			t.Errorf("%s: panel %q returns %v, where none was expected (%s)", p.dashboard, p.title, v, p.why)
		}
	}

	// What was sent, per round, of the Ingresses' requests.
	perSecond := func(n float64) float64 { return n / step.Seconds() } // irate: the last two samples
	total, ok := 0.0, 0.0
	byIngress, okByIngress := map[string]float64{}, map[string]float64{}
	errByRoute, byRoute := map[string]float64{}, map[string]float64{}
	for _, r := range dashboardRequests {
		if r.ingress == "" {
			continue
		}
		n := float64(r.times)
		total += n
		byIngress[r.ingress] += n
		route := r.method + " " + r.host + " " + r.path
		byRoute[route] += n
		if r.status[0] != '4' && r.status[0] != '5' {
			ok += n
			okByIngress[r.ingress] += n
		} else {
			errByRoute[route] += n
		}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }
	if v := results["Controller Request Volume"]; len(v) != 1 || !near(v[0].F, math.Round(perSecond(total)*1000)/1000) {
		t.Errorf("Controller Request Volume %v, want %v requests a second", v, math.Round(perSecond(total)*1000)/1000)
	}
	if v := results["Controller Success Rate (non-4|5xx responses)"]; len(v) != 1 || !near(v[0].F, ok/total) {
		t.Errorf("Controller Success Rate %v, want %v", v, ok/total)
	}
	checkBy := func(title, label string, want map[string]float64) {
		t.Helper()
		got := map[string]float64{}
		for _, s := range results[title] {
			got[s.Metric.Get(label)] = s.F
		}
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", title, got, want)
			return
		}
		for k, w := range want {
			if g, found := got[k]; !found || !near(g, w) {
				t.Errorf("%s: %v, want %v", title, got, want)
				return
			}
		}
	}
	volume, success := map[string]float64{}, map[string]float64{}
	for ing, n := range byIngress {
		volume[ing] = math.Round(perSecond(n)*1000) / 1000
		success[ing] = okByIngress[ing] / n
	}
	checkBy("Ingress Request Volume", "ingress", volume)
	checkBy("Ingress Success Rate (non-4|5xx responses)", "ingress", success)
	// The method, host and path panels: the error rate of each route
	// with errors as sent, and no other series (a route without errors
	// has no series of them to divide, in PromQL as on ingress-nginx).
	got := map[string]float64{}
	for _, s := range results["Response Error Rate by Method and Path"] {
		got[s.Metric.Get("method")+" "+s.Metric.Get("host")+" "+s.Metric.Get("path")] = s.F
	}
	want := map[string]float64{}
	for route, n := range byRoute {
		if errByRoute[route] > 0 {
			want[route] = errByRoute[route] / n
		}
	}
	if !sameRates(got, want, near) {
		t.Errorf("Response Error Rate by Method and Path: %v, want %v", sortedRates(got), sortedRates(want))
	}
	// rate() over the two samples: the same share of each route's count
	// (the series of the waits' requests alone, GET blog /posts, stand
	// still: 0).
	rates := map[string]float64{}
	for _, s := range results["Request Rate by Method and Path"] {
		if s.F != 0 {
			rates[s.Metric.Get("method")+" "+s.Metric.Get("host")+" "+s.Metric.Get("path")] = s.F
		}
	}
	if len(rates) != len(byRoute) {
		t.Errorf("Request Rate by Method and Path: %v, want the routes %v", sortedRates(rates), sortedRates(byRoute))
	}
	for route, n := range byRoute {
		if !near(rates[route]/rates["GET shop.example.com /"], n/byRoute["GET shop.example.com /"]) {
			t.Errorf("Request Rate by Method and Path: %v, not in the proportions sent %v", sortedRates(rates), sortedRates(byRoute))
			break
		}
	}
}

// totalRequests is the sum of nginx_ingress_controller_requests.
func totalRequests(t *testing.T, cp *framework.ControlPlane) float64 {
	t.Helper()
	mfs, err := scrapeFamilies(cp.AuthzMetricsAddress)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, m := range mfs["nginx_ingress_controller_requests"].GetMetric() {
		sum += m.GetCounter().GetValue()
	}
	return sum
}

// scrapeFamilies reads an address's /metrics as Prometheus does.
func scrapeFamilies(address string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + address + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

func familyList(m map[string]*dto.MetricFamily) []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(m))
	for _, f := range m {
		out = append(out, f)
	}
	return out
}

func sameRates(a, b map[string]float64, near func(x, y float64) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !near(v, w) {
			return false
		}
	}
	return true
}

func sortedRates(m map[string]float64) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// memStorage is the scraped samples held in memory as Prometheus's query
// engine reads them (a storage.Queryable): Prometheus's own TSDB would
// bring the cloud SDKs of its remote storage into the module.
type memStorage struct {
	series []*memSeries
}

type memSeries struct {
	labels  labels.Labels
	samples []chunks.Sample
}

func (m *memStorage) add(l labels.Labels, t int64, v float64) {
	for _, s := range m.series {
		if labels.Equal(s.labels, l) {
			s.samples = append(s.samples, floatSample{t: t, f: v})
			return
		}
	}
	m.series = append(m.series, &memSeries{labels: l, samples: []chunks.Sample{floatSample{t: t, f: v}}})
}

func (m *memStorage) Querier(mint, maxt int64) (storage.Querier, error) {
	return &memQuerier{store: m, mint: mint, maxt: maxt}, nil
}

type memQuerier struct {
	store      *memStorage
	mint, maxt int64
}

func (q *memQuerier) Select(_ context.Context, _ bool, _ *storage.SelectHints, matchers ...*labels.Matcher) storage.SeriesSet {
	var out []storage.Series
	for _, s := range q.store.series {
		matched := true
		for _, m := range matchers {
			if !m.Matches(s.labels.Get(m.Name)) {
				matched = false
				break
			}
		}
		if !matched {
			continue
		}
		var in []chunks.Sample
		for _, x := range s.samples {
			if x.T() >= q.mint && x.T() <= q.maxt {
				in = append(in, x)
			}
		}
		if len(in) > 0 {
			out = append(out, storage.NewListSeries(s.labels, in))
		}
	}
	sort.Slice(out, func(i, j int) bool { return labels.Compare(out[i].Labels(), out[j].Labels()) < 0 })
	return &memSeriesSet{series: out, i: -1}
}

func (q *memQuerier) LabelValues(context.Context, string, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}

func (q *memQuerier) LabelNames(context.Context, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}

func (q *memQuerier) Close() error { return nil }

type memSeriesSet struct {
	series []storage.Series
	i      int
}

func (s *memSeriesSet) Next() bool                        { s.i++; return s.i < len(s.series) }
func (s *memSeriesSet) At() storage.Series                { return s.series[s.i] }
func (s *memSeriesSet) Err() error                        { return nil }
func (s *memSeriesSet) Warnings() annotations.Annotations { return nil }

// floatSample is one scraped float sample.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

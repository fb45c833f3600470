package e2e

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
)

// requestMetricsIngressesYAML are two Ingresses and a canary: shop's / to
// alpha and /api to gamma, its canary (by header) to beta, and blog's
// exact /posts to gamma.
const requestMetricsIngressesYAML = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: shop, namespace: default}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /api, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop-canary
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/canary: "true"
    nginx.ingress.kubernetes.io/canary-by-header: X-Canary
spec:
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: blog, namespace: default}
spec:
  rules:
  - host: blog.example.com
    http: {paths: [{path: /posts, pathType: Exact, backend: {service: {name: gamma, port: {number: 80}}}}]}
`

// TestRequestMetricsLikeIngressNginx sends known requests through a real
// Envoy under serve --request-metrics and scrapes the authorisation
// service's /metrics as Prometheus would: nginx_ingress_controller_requests
// has one series per Ingress, path as written, Service, method, status,
// host and canary, counting exactly what was sent, and each histogram of
// ingress-nginx's collector (internal/ingress/metric/collectors/socket.go)
// has ingress-nginx's buckets and observed each request once. Requests for
// a host no Ingress serves are not counted, as ingress-nginx's
// --metrics-per-undefined-host default (its test/e2e/metrics/metrics.go
// checks the flag's other side). Then the service is started again with
// ingress-nginx's --metrics-per-host=false, --report-status-classes,
// --exclude-socket-metrics and --time-buckets beside the same Envoy, and
// the same requests are counted as socket.go counts them with those.
func TestRequestMetricsLikeIngressNginx(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta", "gamma")
	t.Setenv("POD_NAMESPACE", "ingress-nginx")
	t.Setenv("POD_NAME", "ingress-nginx-controller-abcde")
	fm := startFileModeWith(t, []string{"--request-metrics"},
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"ingresses.yaml", requestMetricsIngressesYAML})
	cp, envoy := fm.cp, fm.envoy
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", httpRoutes) })
	for _, c := range []struct{ host, path, backend string }{{"shop.example.com", "/", "alpha"}, {"shop.example.com", "/api/x", "gamma"}, {"blog.example.com", "/posts", "gamma"}} {
		framework.Eventually(t, convergeTimeout, c.host+c.path+" served", func() error {
			return envoy.Expect(c.host, c.path, http.StatusOK, c.backend)
		})
	}
	framework.Eventually(t, convergeTimeout, "the canary served", func() error {
		r, err := rawExchange(envoy.HTTPAddress, []string{"GET / HTTP/1.1\r\nHost: shop.example.com\r\nX-Canary: always\r\n\r\n"})
		if err == nil && r[0].backend != "beta" {
			err = fmt.Errorf("answered by %q", r[0].backend)
		}
		return err
	})
	// What the waits above sent is counted too, a moment later (Envoy
	// sends its entries in batches): the test reads the counts once a
	// marker sent after them is counted (its one Envoy worker sends them
	// in order), and counts its own requests from there.
	if _, err := rawExchange(envoy.HTTPAddress, []string{"OPTIONS /posts HTTP/1.1\r\nHost: blog.example.com\r\n\r\n"}); err != nil {
		t.Fatal(err)
	}
	var before, beforeBytes map[string]float64
	framework.Eventually(t, convergeTimeout, "the marker counted", func() error {
		mfs, err := scrapeAuthz(cp)
		if err != nil {
			return err
		}
		before = seriesCounts(mfs["nginx_ingress_controller_requests"], nil)
		beforeBytes = map[string]float64{}
		for _, m := range mfs["nginx_ingress_controller_request_size"].GetMetric() {
			beforeBytes[seriesKey(metricLabels(m))] = m.GetHistogram().GetSampleSum()
		}
		for k := range before {
			if strings.Contains(k, `method="OPTIONS"`) {
				return nil
			}
		}
		return fmt.Errorf("no OPTIONS request counted yet")
	})

	type series struct{ ingress, service, path, method, status, host, canary string }
	send := []struct {
		request string
		times   int
		want    series
	}{
		{"GET /cart HTTP/1.1\r\nHost: shop.example.com\r\n\r\n", 3, series{"shop", "alpha", "/", "GET", "200", "shop.example.com", ""}},
		{"POST /cart?status=503 HTTP/1.1\r\nHost: shop.example.com\r\nContent-Length: 0\r\n\r\n", 1, series{"shop", "alpha", "/", "POST", "503", "shop.example.com", ""}},
		{"GET /cart HTTP/1.1\r\nHost: shop.example.com\r\nX-Canary: always\r\n\r\n", 2, series{"shop", "alpha", "/", "GET", "200", "shop.example.com", "default-beta-80"}},
		{"GET /api/items?status=404 HTTP/1.1\r\nHost: shop.example.com:80\r\n\r\n", 2, series{"shop", "gamma", "/api", "GET", "404", "shop.example.com", ""}},
		{"PUT /posts HTTP/1.1\r\nHost: BLOG.example.com\r\nContent-Length: 5\r\n\r\nhello", 1, series{"blog", "gamma", "/posts", "PUT", "200", "blog.example.com", ""}},
		{"DELETE /posts?status=500 HTTP/1.1\r\nHost: blog.example.com\r\n\r\n", 1, series{"blog", "gamma", "/posts", "DELETE", "500", "blog.example.com", ""}},
		// No Ingress serves this host: not counted.
		{"GET / HTTP/1.1\r\nHost: nobody.example.com\r\n\r\n", 2, series{}},
	}
	var requests []string
	want := map[string]float64{}
	var sent float64
	for _, s := range send {
		for range s.times {
			requests = append(requests, s.request)
		}
		if s.want.ingress == "" {
			continue
		}
		w := s.want
		key := seriesKey(map[string]string{"namespace": "default", "ingress": w.ingress, "service": w.service, "path": w.path, "method": w.method,
			"status": w.status, "host": w.host, "canary": w.canary,
			"controller_namespace": "ingress-nginx", "controller_class": kube.DefaultControllerName, "controller_pod": "ingress-nginx-controller-abcde"})
		want[key] += float64(s.times)
		sent += float64(s.times)
	}
	if _, err := rawExchange(envoy.HTTPAddress, requests); err != nil {
		t.Fatal(err)
	}

	var got map[string]float64
	var families map[string]*dto.MetricFamily
	framework.Eventually(t, convergeTimeout, "every request counted", func() error {
		var err error
		if families, err = scrapeAuthz(cp); err != nil {
			return err
		}
		got = seriesCounts(families["nginx_ingress_controller_requests"], before)
		total := 0.0
		for _, v := range got {
			total += v
		}
		if total < sent {
			return fmt.Errorf("%v of %v requests counted", total, sent)
		}
		return nil
	})
	if !sameCounts(got, want) {
		t.Errorf("nginx_ingress_controller_requests counted\n%s\nwant\n%s", describeSeries(got), describeSeries(want))
	}
	if mf := families["nginx_ingress_controller_requests"]; mf.GetType() != dto.MetricType_COUNTER {
		t.Errorf("nginx_ingress_controller_requests is a %s", mf.GetType())
	}

	// ingress-nginx's buckets (pkg/flags/flags.go's defaults), and each
	// request observed once by each histogram: every request here reached
	// a backend, so the upstream's response time too.
	timeBuckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	lengthBuckets := []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	sizeBuckets := []float64{10, 100, 1000, 10000, 100000, 1e+06, 1e+07}
	for _, h := range []struct {
		name    string
		buckets []float64
	}{
		{"nginx_ingress_controller_request_duration_seconds", timeBuckets},
		{"nginx_ingress_controller_response_duration_seconds", timeBuckets},
		{"nginx_ingress_controller_header_duration_seconds", timeBuckets},
		{"nginx_ingress_controller_connect_duration_seconds", timeBuckets},
		{"nginx_ingress_controller_request_size", lengthBuckets},
		{"nginx_ingress_controller_response_size", lengthBuckets},
		{"nginx_ingress_controller_bytes_sent", sizeBuckets},
	} {
		mf := families[h.name]
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Errorf("%s is a %s, want a histogram", h.name, mf.GetType())
			continue
		}
		observed := map[string]float64{}
		for _, m := range mf.GetMetric() {
			var bounds []float64
			for _, b := range m.GetHistogram().GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
			if !slices.Equal(bounds, append(slices.Clip(h.buckets), math.Inf(1))) {
				t.Errorf("%s buckets %v, want ingress-nginx's %v", h.name, bounds, h.buckets)
			}
			observed[seriesKey(metricLabels(m))] = float64(m.GetHistogram().GetSampleCount())
		}
		for k, v := range before {
			observed[k] -= v
			if observed[k] == 0 {
				delete(observed, k)
			}
		}
		if !sameCounts(observed, want) {
			t.Errorf("%s observed\n%s\nwant\n%s", h.name, describeSeries(observed), describeSeries(want))
		}
	}

	// $upstream_connect_time: the upstream connections this Envoy made
	// (one per backend at least, the first requests' before the marker)
	// took some time; the reused ones none (below, with a bucket at 0).
	connectSum := 0.0
	for _, m := range families["nginx_ingress_controller_connect_duration_seconds"].GetMetric() {
		connectSum += m.GetHistogram().GetSampleSum()
	}
	if connectSum <= 0 || connectSum > 1 {
		t.Errorf("connect_duration_seconds sums %v s, want some microseconds of new connections", connectSum)
	}

	// $request_length: every byte of each request as sent (its line,
	// headers and body), as nginx counts it.
	wantBytes := map[string]float64{}
	for _, s := range send {
		if s.want.ingress == "" {
			continue
		}
		w := s.want
		key := seriesKey(map[string]string{"namespace": "default", "ingress": w.ingress, "service": w.service, "path": w.path, "method": w.method,
			"status": w.status, "host": w.host, "canary": w.canary,
			"controller_namespace": "ingress-nginx", "controller_class": kube.DefaultControllerName, "controller_pod": "ingress-nginx-controller-abcde"})
		wantBytes[key] += float64(s.times * len(s.request))
	}
	gotBytes := map[string]float64{}
	for _, m := range families["nginx_ingress_controller_request_size"].GetMetric() {
		gotBytes[seriesKey(metricLabels(m))] = m.GetHistogram().GetSampleSum()
	}
	for k, v := range wantBytes {
		if got := gotBytes[k] - beforeBytes[k]; got != v {
			t.Errorf("request_size sum of %s: %v, want the %v bytes sent", k, got, v)
		}
	}

	// ingress-nginx's flags, given to the service anew beside the same
	// Envoy (which streams to it again once it listens).
	cp.Authz.Kill()
	cp.Authz = framework.StartAuthz(t, cp.AuthzAddress, cp.AuthzMetricsAddress,
		"--metrics-per-host=false", "--report-status-classes",
		"--exclude-socket-metrics=nginx_ingress_controller_request_size,header_duration_seconds",
		"--time-buckets=0,1")
	t.Cleanup(cp.Authz.Kill) // before Envoy stops: its stream would hold a graceful stop
	framework.Eventually(t, convergeTimeout, "the marker counted by the new service", func() error {
		if _, err := rawExchange(envoy.HTTPAddress, []string{"OPTIONS /posts HTTP/1.1\r\nHost: blog.example.com\r\n\r\n"}); err != nil {
			return err
		}
		mfs, err := scrapeAuthz(cp)
		if err != nil {
			return err
		}
		if before = seriesCounts(mfs["nginx_ingress_controller_requests"], nil); len(before) == 0 {
			return fmt.Errorf("nothing counted yet")
		}
		return nil
	})
	// socket.go without metricsPerHost: no host label, and the requests
	// of a host no Ingress serves counted too (its filter is per host),
	// with the empty names of nginx's default server; with
	// reportStatusClasses the status's class.
	want = map[string]float64{}
	sent = 0
	for _, s := range send {
		w, namespace := s.want, "default"
		if w.ingress == "" { // Envoy's 404 for the host no Ingress serves
			w.method, w.status, namespace = "GET", "404", ""
		}
		key := seriesKey(map[string]string{"namespace": namespace, "ingress": w.ingress, "service": w.service, "path": w.path, "method": w.method,
			"status": w.status[:1] + "xx", "canary": w.canary,
			"controller_namespace": "ingress-nginx", "controller_class": kube.DefaultControllerName, "controller_pod": "ingress-nginx-controller-abcde"})
		want[key] += float64(s.times)
		sent += float64(s.times)
	}
	if _, err := rawExchange(envoy.HTTPAddress, requests); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "every request counted by the new service", func() error {
		var err error
		if families, err = scrapeAuthz(cp); err != nil {
			return err
		}
		got = seriesCounts(families["nginx_ingress_controller_requests"], before)
		total := 0.0
		for k, v := range got {
			if !strings.Contains(k, `method="OPTIONS"`) {
				total += v
			}
		}
		if total < sent {
			return fmt.Errorf("%v of %v requests counted", total, sent)
		}
		return nil
	})
	// The markers above (one per try until one was counted) are left out.
	for k := range got {
		if strings.Contains(k, `method="OPTIONS"`) {
			delete(got, k)
		}
	}
	if !sameCounts(got, want) {
		t.Errorf("with --metrics-per-host=false --report-status-classes, nginx_ingress_controller_requests counted\n%s\nwant\n%s", describeSeries(got), describeSeries(want))
	}
	// --exclude-socket-metrics: the two named are not served, the others
	// are (ingress-nginx's test/e2e/metrics/metrics.go).
	for _, name := range []string{"request_size", "header_duration_seconds"} {
		if _, ok := families["nginx_ingress_controller_"+name]; ok {
			t.Errorf("nginx_ingress_controller_%s served, though excluded", name)
		}
	}
	for _, name := range []string{"requests", "request_duration_seconds", "response_duration_seconds", "connect_duration_seconds", "response_size", "bytes_sent"} {
		if _, ok := families["nginx_ingress_controller_"+name]; !ok {
			t.Errorf("nginx_ingress_controller_%s not served", name)
		}
	}
	// --time-buckets=0,1, and $upstream_connect_time 0 for a request over
	// a reused connection, as nginx's for a keepalive one: this Envoy's
	// connections to the backends were made before the service started,
	// so every request took one of them, each observed at 0 exactly.
	var reused, observed uint64
	for _, m := range families["nginx_ingress_controller_connect_duration_seconds"].GetMetric() {
		b := m.GetHistogram().GetBucket()
		if len(b) != 3 || b[0].GetUpperBound() != 0 || b[1].GetUpperBound() != 1 {
			t.Errorf("connect_duration_seconds buckets %v, want --time-buckets' 0, 1", b)
			continue
		}
		reused += b[0].GetCumulativeCount()
		observed += m.GetHistogram().GetSampleCount()
	}
	if observed == 0 || reused != observed {
		t.Errorf("connect_duration_seconds: %d of %d requests at 0 s, want all (reused connections)", reused, observed)
	}
}

// scrapeAuthz reads the authorisation service's /metrics as Prometheus
// does.
func scrapeAuthz(cp *framework.ControlPlane) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + cp.AuthzMetricsAddress + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// counts is a counter's values by series, less those of before.
func seriesCounts(mf *dto.MetricFamily, before map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range mf.GetMetric() {
		k := seriesKey(metricLabels(m))
		if v := m.GetCounter().GetValue() - before[k]; v != 0 {
			out[k] = v
		}
	}
	return out
}

func metricLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// seriesKey is a series' labels, sorted, as one string.
func seriesKey(labels map[string]string) string {
	var parts []string
	for k, v := range labels {
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ",") + "}"
}

func sameCounts(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func describeSeries(m map[string]float64) string {
	var lines []string
	for k, v := range m {
		lines = append(lines, fmt.Sprintf("  %s %v", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

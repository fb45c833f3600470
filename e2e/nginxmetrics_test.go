package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestNginxControllerMetrics scrapes serve's /metrics as Prometheus would
// while a real Envoy ACKs and NACKs what the real control plane sends, and
// checks ingress-nginx's controller metrics (its
// internal/ingress/metric/collectors/controller.go) by name, labels and
// value: each ACK counts in nginx_ingress_controller_success, a NACK in
// _errors and turns config_last_reload_successful to 0 until Envoy ACKs
// again, the success timestamp moves, and ssl_expire_time_seconds is the
// served certificate's NotAfter for its host. The NACK is Envoy's own:
// the HTTPS listener, added with the first certificate, cannot bind a
// port the test holds ("cannot bind ... Address already in use").
func TestNginxControllerMetrics(t *testing.T) {
	backends := echoBackends(t, "alpha")
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	secure := ca.Issue(t, "secure", "secure.example.com")
	// The pod's environment, as deploy/ sets it from the downward API.
	t.Setenv("POD_NAMESPACE", "ingress-nginx")
	t.Setenv("POD_NAME", "ingress-xds-7d9f-abcde")
	fm := startFileModeWith(t, []string{"--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx"},
		manifest{"services.yaml", echoServicesYAML(backends...)},
		manifest{"secrets.yaml", tlsSecretYAML("secure-cert", secure.CertPEM, secure.KeyPEM)},
		manifest{"plain.yaml", metricsIngressYAML("plain", "plain.example.com", false)})
	cp, envoy := fm.cp, fm.envoy
	framework.Eventually(t, convergeTimeout, "plain host served", func() error {
		return envoy.Expect("plain.example.com", "/", http.StatusOK, "alpha")
	})
	controller := map[string]string{"controller_namespace": "ingress-nginx", "controller_class": "k8s.io/ingress-nginx", "controller_pod": "ingress-xds-7d9f-abcde"}

	m := scrapeMetrics(t, cp)
	successes := m.value(t, "nginx_ingress_controller_success", dto.MetricType_COUNTER, controller)
	if successes < 1 {
		t.Errorf("success = %v after Envoy took its first configuration", successes)
	}
	if v := m.value(t, "nginx_ingress_controller_config_last_reload_successful", dto.MetricType_GAUGE, controller); v != 1 {
		t.Errorf("config_last_reload_successful = %v, want 1", v)
	}
	at := m.value(t, "nginx_ingress_controller_config_last_reload_successful_timestamp_seconds", dto.MetricType_GAUGE, controller)
	if at <= 0 {
		t.Errorf("last successful reload at %v", at)
	}
	if v := m.value(t, "nginx_ingress_controller_errors", dto.MetricType_COUNTER, controller); v != 0 {
		t.Errorf("errors = %v before any NACK", v)
	}
	if m.value(t, "nginx_ingress_controller_config_hash", dto.MetricType_GAUGE, controller) == 0 {
		t.Error("config_hash is 0 with nothing rejected")
	}

	// Hold the HTTPS port, then serve the first certificate: Envoy cannot
	// bind the HTTPS listener and rejects the listeners.
	held, err := net.Listen("tcp", ":"+strconv.Itoa(cp.HTTPSPort))
	if err != nil {
		t.Fatalf("holding the HTTPS port: %v", err)
	}
	defer held.Close()
	writeManifest(t, fm.dir, "secure.yaml", metricsIngressYAML("secure", "secure.example.com", true))
	framework.Eventually(t, convergeTimeout, "Envoy's NACK counted", func() error {
		m = scrapeMetrics(t, cp)
		if v := m.value(t, "nginx_ingress_controller_errors", dto.MetricType_COUNTER, controller); v < 1 {
			return fmt.Errorf("errors = %v", v)
		}
		return nil
	})
	if v := m.value(t, "nginx_ingress_controller_config_last_reload_successful", dto.MetricType_GAUGE, controller); v != 0 {
		t.Errorf("after the NACK config_last_reload_successful = %v, want 0", v)
	}
	if v := m.value(t, "nginx_ingress_controller_config_hash", dto.MetricType_GAUGE, controller); v != 0 {
		t.Errorf("after the NACK config_hash = %v, want 0", v)
	}
	if n, err := envoy.Stat("listener_manager.lds.update_rejected"); err != nil || n < 1 {
		t.Errorf("Envoy's listener_manager.lds.update_rejected = %d (%v): the NACK is not Envoy's", n, err)
	}
	// The certificate's expiry is shown from the translation, whether or
	// not an Envoy took it, as ingress-nginx's from its configuration.
	ssl := map[string]string{"namespace": "default", "class": "k8s.io/ingress-nginx", "host": "secure.example.com",
		"secret_name": "secure-cert", "identifier": "-" + secure.Cert.SerialNumber.String()}
	if v := m.value(t, "nginx_ingress_controller_ssl_expire_time_seconds", dto.MetricType_GAUGE, ssl); v != float64(secure.Cert.NotAfter.Unix()) {
		t.Errorf("ssl_expire_time_seconds = %v, want the certificate's NotAfter %d", v, secure.Cert.NotAfter.Unix())
	}
	info := map[string]string{"issuer_common_name": "ingress-xds e2e CA", "issuer_organization": "",
		"serial_number": secure.Cert.SerialNumber.String(), "public_key_algorithm": "ECDSA"}
	for k, v := range ssl {
		info[k] = v
	}
	if v := m.value(t, "nginx_ingress_controller_ssl_certificate_info", dto.MetricType_GAUGE, info); v != 1 {
		t.Errorf("ssl_certificate_info = %v", v)
	}

	// Free the port and take the certificate away: the listeners without
	// HTTPS are a new version, which Envoy ACKs.
	held.Close()
	if err := os.Remove(filepath.Join(fm.dir, "secure.yaml")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "Envoy's ACK after the NACK", func() error {
		m = scrapeMetrics(t, cp)
		if v := m.value(t, "nginx_ingress_controller_config_last_reload_successful", dto.MetricType_GAUGE, controller); v != 1 {
			return fmt.Errorf("config_last_reload_successful = %v", v)
		}
		return nil
	})
	if v := m.value(t, "nginx_ingress_controller_success", dto.MetricType_COUNTER, controller); v <= successes {
		t.Errorf("success = %v, was %v before the ACK", v, successes)
	}
	if v := m.value(t, "nginx_ingress_controller_config_last_reload_successful_timestamp_seconds", dto.MetricType_GAUGE, controller); v <= at {
		t.Errorf("last successful reload at %v, was %v before the ACK", v, at)
	}
	if _, ok := m["nginx_ingress_controller_ssl_expire_time_seconds"]; ok {
		t.Error("ssl_expire_time_seconds still shown for a certificate no longer served")
	}
}

func metricsIngressYAML(name, host string, tls bool) string {
	spec := ""
	if tls {
		spec = fmt.Sprintf("  tls:\n  - hosts: [%s]\n    secretName: secure-cert\n", host)
	}
	return fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: %s, namespace: default}
spec:
  ingressClassName: nginx
%s  rules:
  - host: %s
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
`, name, spec, host)
}

// metrics are the families of one scrape, by name.
type metrics map[string]*dto.MetricFamily

// scrapeMetrics reads /metrics in Prometheus's text format and parses it
// as Prometheus does.
func scrapeMetrics(t *testing.T, cp *framework.ControlPlane) metrics {
	t.Helper()
	m, err := scrape(cp)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// scrape is scrapeMetrics, saying what failed rather than failing.
func scrape(cp *framework.ControlPlane) (metrics, error) {
	resp, err := http.Get("http://" + cp.MetricsAddress + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("scraping /metrics: %w", err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parsing /metrics: %w", err)
	}
	return mfs, nil
}

// value is the value of the one series of name whose labels are exactly
// want, checking the family's type; it fails the test when there is none.
func (m metrics) value(t *testing.T, name string, typ dto.MetricType, want map[string]string) float64 {
	t.Helper()
	mf := m[name]
	if mf == nil {
		t.Fatalf("/metrics has no %s", name)
	}
	if mf.GetType() != typ {
		t.Errorf("%s is a %s, want a %s", name, mf.GetType(), typ)
	}
	var seen []string
	for _, s := range mf.GetMetric() {
		got := map[string]string{}
		for _, l := range s.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		seen = append(seen, fmt.Sprint(got))
		if !sameLabels(got, want) {
			continue
		}
		if typ == dto.MetricType_COUNTER {
			return s.GetCounter().GetValue()
		}
		return s.GetGauge().GetValue()
	}
	t.Fatalf("%s has no series labelled %v; it has %v", name, want, seen)
	return 0
}

func sameLabels(a, b map[string]string) bool {
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

// TestNginxLeaderElectionMetric runs two control planes against a real API
// server: nginx_ingress_controller_leader_election_status, labelled with
// the lease's name as ingress-nginx's (its nginx.go passes the election
// id), is 1 on the replica holding the lease and 0 on the other, and
// moves to the other when the leader stops and releases the lease.
func TestNginxLeaderElectionMetric(t *testing.T) {
	api := startClusterMode(t)
	args := []string{"--kubeconfig", api.Kubeconfig, "--status-address", "192.0.2.1",
		"--leader-election-namespace", "default", "--leader-election-id", "metrics-leader",
		"--leader-election-lease-duration", "4s", "--leader-election-renew-deadline", "3s", "--leader-election-retry-period", "500ms"}
	t.Setenv("POD_NAMESPACE", "default")
	var cps [2]*framework.ControlPlane
	for i := range cps {
		t.Setenv("POD_NAME", fmt.Sprintf("ingress-xds-%d", i))
		cps[i] = framework.StartControlPlane(t, args...)
	}
	status := func(i int) (float64, error) {
		m, err := scrape(cps[i])
		if err != nil {
			return 0, err
		}
		want := map[string]string{"controller_namespace": "default", "controller_class": "ingress-xds.io/controller",
			"controller_pod": fmt.Sprintf("ingress-xds-%d", i), "name": "metrics-leader"}
		mf := m["nginx_ingress_controller_leader_election_status"]
		if mf == nil || len(mf.GetMetric()) == 0 {
			return 0, fmt.Errorf("replica %d shows no leader_election_status", i)
		}
		return m.value(t, "nginx_ingress_controller_leader_election_status", dto.MetricType_GAUGE, want), nil
	}
	leader := -1
	framework.Eventually(t, 60*time.Second, "one leader, one follower", func() error {
		var got [2]float64
		for i := range cps {
			v, err := status(i)
			if err != nil {
				return err
			}
			got[i] = v
		}
		switch got {
		case [2]float64{1, 0}:
			leader = 0
		case [2]float64{0, 1}:
			leader = 1
		default:
			return fmt.Errorf("leader_election_status %v", got)
		}
		return nil
	})
	follower := 1 - leader
	cps[leader].Stop() // releases the lease
	framework.Eventually(t, 30*time.Second, "the follower leads", func() error {
		if v, err := status(follower); err != nil || v != 1 {
			return fmt.Errorf("follower's leader_election_status = %v (%v)", v, err)
		}
		return nil
	})
}

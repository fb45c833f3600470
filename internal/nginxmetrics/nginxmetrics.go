// Package nginxmetrics exposes ingress-nginx's controller metrics
// (nginx_ingress_controller_*) with ingress-nginx's names, help strings,
// label names and types, so that the dashboards and alerts of its users
// keep working (issue 29). It mirrors ingress-nginx's
// internal/ingress/metric/collectors/controller.go; docs/observability.md
// says what each metric means here.
//
// The Collector holds no rule of the control plane: it is fed by the
// layers, never asking anything of them. The xDS server tells it of each
// ACK and NACK (xds.AnswerObserver: an Envoy's "reload"), the pipeline of
// each translation's IR (the certificates served, by host) and of each
// snapshot published, and serve of the leader election's terms.
package nginxmetrics

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// namespace is ingress-nginx's PrometheusNamespace
// (internal/ingress/metric/collectors/main.go).
const namespace = "nginx_ingress_controller"

// Controller identifies this controller, as ingress-nginx's constLabels:
// the pod's namespace and name ($POD_NAMESPACE, $POD_NAME) and the
// controller class (serve --controller-class, as ingress-nginx's
// --controller-class).
type Controller struct {
	Namespace, Class, Pod string
	// Release, Build and Repository label build_info.
	Release, Build, Repository string
}

// Collector is the prometheus.Collector of ingress-nginx's controller
// metrics. Its methods may be called from any goroutine.
type Collector struct {
	ctl      Controller
	registry *prometheus.Registry
	now      func() time.Time

	mu sync.Mutex
	// rejected holds, per open stream, the resource types whose last
	// answer was a NACK.
	rejected      map[string]map[string]bool
	successes     float64
	errors        float64
	lastSuccessAt time.Time
	hash          uint64
	certs         []certMetric
	parsed        map[*ir.Certificate]*x509.Certificate // by identity: the IR hands out an unchanged value again
	leader        map[string]float64                    // by lease name

	buildInfo, configHash, configSuccess, configSuccessTime *prometheus.Desc
	success, errorsDesc, sslExpire, sslInfo, leaderDesc     *prometheus.Desc
}

type certMetric struct {
	host, namespace, secret string
	cert                    *x509.Certificate
}

// operation are the reload counters' labels, as ingress-nginx's.
var operation = []string{"controller_namespace", "controller_class", "controller_pod"}

// New returns a Collector registered in a registry of its own (Gatherer).
func New(ctl Controller) *Collector {
	constLabels := prometheus.Labels{
		"controller_namespace": ctl.Namespace,
		"controller_class":     ctl.Class,
		"controller_pod":       ctl.Pod,
	}
	name := func(n string) string { return prometheus.BuildFQName(namespace, "", n) }
	c := &Collector{
		ctl:      ctl,
		registry: prometheus.NewRegistry(),
		now:      time.Now,
		rejected: map[string]map[string]bool{},
		parsed:   map[*ir.Certificate]*x509.Certificate{},
		leader:   map[string]float64{},
		buildInfo: prometheus.NewDesc(name("build_info"),
			"A metric with a constant '1' labeled with information about the build.", nil,
			prometheus.Labels{
				"controller_namespace": ctl.Namespace, "controller_class": ctl.Class, "controller_pod": ctl.Pod,
				"release": ctl.Release, "build": ctl.Build, "repository": ctl.Repository,
			}),
		configHash: prometheus.NewDesc(name("config_hash"),
			"Running configuration hash actually running", nil, constLabels),
		configSuccess: prometheus.NewDesc(name("config_last_reload_successful"),
			"Whether the last configuration reload attempt was successful", nil, constLabels),
		configSuccessTime: prometheus.NewDesc(name("config_last_reload_successful_timestamp_seconds"),
			"Timestamp of the last successful configuration reload.", nil, constLabels),
		success: prometheus.NewDesc(name("success"),
			"Cumulative number of Ingress controller reload operations", operation, nil),
		errorsDesc: prometheus.NewDesc(name("errors"),
			"Cumulative number of Ingress controller errors during reload operations", operation, nil),
		sslExpire: prometheus.NewDesc(name("ssl_expire_time_seconds"),
			`Number of seconds since 1970 to the SSL Certificate expire.
			An example to check if this certificate will expire in 10 days is: "nginx_ingress_controller_ssl_expire_time_seconds < (time() + (10 * 24 * 3600))"`,
			[]string{"namespace", "class", "host", "secret_name", "identifier"}, nil),
		sslInfo: prometheus.NewDesc(name("ssl_certificate_info"),
			"Hold all labels associated to a certificate",
			[]string{"namespace", "class", "host", "secret_name", "identifier", "issuer_organization", "issuer_common_name", "serial_number", "public_key_algorithm"}, nil),
		leaderDesc: prometheus.NewDesc(name("leader_election_status"),
			"Gauge reporting status of the leader election, 0 indicates follower, 1 indicates leader. 'name' is the string used to identify the lease",
			[]string{"name"}, constLabels),
	}
	c.registry.MustRegister(c)
	return c
}

// Gatherer is the Collector's registry, for /metrics.
func (c *Collector) Gatherer() prometheus.Gatherer { return c.registry }

// Answered records an Envoy's answer to a response of typeURL on a stream
// (xds.AnswerObserver): an ACK is a successful reload, a NACK a failed
// one. The configuration counts as reloaded successfully while no open
// stream's last answer of any type is a NACK.
func (c *Collector) Answered(stream, typeURL, _ string, accepted bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if accepted {
		c.successes++
		c.lastSuccessAt = c.now()
		if r := c.rejected[stream]; r != nil {
			delete(r, typeURL)
			if len(r) == 0 {
				delete(c.rejected, stream)
			}
		}
		return
	}
	c.errors++
	if c.rejected[stream] == nil {
		c.rejected[stream] = map[string]bool{}
	}
	c.rejected[stream][typeURL] = true
}

// StreamClosed forgets a stream's answers (xds.AnswerObserver): an Envoy
// gone no longer runs what it rejected.
func (c *Collector) StreamClosed(stream string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rejected, stream)
}

// Published records the versions of the snapshot served, by type URL: the
// configuration hash is theirs.
func (c *Collector) Published(versions map[string]string) {
	types := make([]string, 0, len(versions))
	for t := range versions {
		types = append(types, t)
	}
	sort.Strings(types)
	h := fnv.New64a()
	for _, t := range types {
		fmt.Fprintf(h, "%s=%s\n", t, versions[t])
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A float64 holds integers exactly up to 2^53: keep the value exact.
	c.hash = h.Sum64() & (1<<53 - 1)
}

// Translated records the certificates a translation serves, by host: each
// virtual host with a certificate is one of ingress-nginx's servers with
// an SSLCert. Certificates that no longer serve a host disappear from the
// metrics, as ingress-nginx's RemoveMetrics removes them.
func (c *Collector) Translated(r *ir.IR) {
	byName := make(map[string]*ir.Certificate, len(r.Certificates))
	for _, cert := range r.Certificates {
		byName[cert.Name] = cert
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	parsed := make(map[*ir.Certificate]*x509.Certificate, len(r.Certificates))
	var certs []certMetric
	for _, vh := range r.VirtualHosts {
		cert := byName[vh.Certificate]
		if cert == nil || vh.Host == ir.WildcardHost {
			continue
		}
		x, ok := parsed[cert]
		if !ok {
			if x, ok = c.parsed[cert]; !ok {
				x = leaf(cert.Chain)
			}
			parsed[cert] = x
		}
		if x == nil {
			continue
		}
		certs = append(certs, certMetric{host: vh.Host, namespace: cert.Secret.Namespace, secret: cert.Secret.Name, cert: x})
	}
	c.parsed, c.certs = parsed, certs
}

// leaf is the first certificate of a PEM chain, nil if there is none.
func leaf(chain []byte) *x509.Certificate {
	for rest := chain; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return nil
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		x, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil
		}
		return x
	}
}

// OnStartedLeading records that this replica holds the lease name, as
// ingress-nginx's; OnStoppedLeading that it does not (or no longer).
func (c *Collector) OnStartedLeading(name string) { c.setLeader(name, 1) }

// OnStoppedLeading: see OnStartedLeading.
func (c *Collector) OnStoppedLeading(name string) { c.setLeader(name, 0) }

func (c *Collector) setLeader(name string, v float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leader[name] = v
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.buildInfo, c.configHash, c.configSuccess, c.configSuccessTime,
		c.success, c.errorsDesc, c.sslExpire, c.sslInfo, c.leaderDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the values as they stand, all
// read under one lock, so that a scrape never sees half a change.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	ok := len(c.rejected) == 0
	hash, successful := float64(0), float64(0)
	if ok {
		hash, successful = float64(c.hash), 1
	}
	var at float64
	if !c.lastSuccessAt.IsZero() {
		at = float64(c.lastSuccessAt.UnixNano()) / 1e9
	}
	gauge(c.buildInfo, 1)
	gauge(c.configHash, hash)
	gauge(c.configSuccess, successful)
	gauge(c.configSuccessTime, at)
	ch <- prometheus.MustNewConstMetric(c.success, prometheus.CounterValue, c.successes, c.ctl.Namespace, c.ctl.Class, c.ctl.Pod)
	ch <- prometheus.MustNewConstMetric(c.errorsDesc, prometheus.CounterValue, c.errors, c.ctl.Namespace, c.ctl.Class, c.ctl.Pod)
	for _, m := range c.certs {
		x := m.cert
		id := fmt.Sprintf("%s-%s", x.Issuer.SerialNumber, x.SerialNumber.String()) // ingress-nginx's SSLCert.Identifier
		gauge(c.sslExpire, float64(x.NotAfter.Unix()), m.namespace, c.ctl.Class, m.host, m.secret, id)
		org := ""
		if len(x.Issuer.Organization) > 0 {
			org = x.Issuer.Organization[0]
		}
		gauge(c.sslInfo, 1, m.namespace, c.ctl.Class, m.host, m.secret, id, org, x.Issuer.CommonName,
			x.SerialNumber.String(), x.PublicKeyAlgorithm.String())
	}
	for name, v := range c.leader {
		gauge(c.leaderDesc, v, name)
	}
}

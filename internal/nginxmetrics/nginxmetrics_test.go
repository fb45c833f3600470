package nginxmetrics

import (
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

var ctl = Controller{Namespace: "ingress", Class: "k8s.io/ingress-nginx", Pod: "ingress-xds-0", Release: "v1"}

// family gathers c and returns the metrics of one family, by name without
// the nginx_ingress_controller_ prefix.
func family(t *testing.T, c *Collector, name string) []*dto.Metric {
	t.Helper()
	mfs, err := c.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == namespace+"_"+name {
			return mf.GetMetric()
		}
	}
	return nil
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value is the one metric's value of a family, with its labels checked
// to be ingress-nginx's controller labels.
func value(t *testing.T, c *Collector, name string) float64 {
	t.Helper()
	ms := family(t, c, name)
	if len(ms) != 1 {
		t.Fatalf("%s: %d metrics, want 1", name, len(ms))
	}
	l := labels(ms[0])
	if l["controller_namespace"] != ctl.Namespace || l["controller_class"] != ctl.Class || l["controller_pod"] != ctl.Pod {
		t.Errorf("%s: labels %v", name, l)
	}
	m := ms[0]
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}

// An ACK is a successful reload and a NACK a failed one, as ingress-nginx's
// controller.go counts its reloads: last_reload_successful is 0 while any
// open stream's last answer of a type is a NACK, and back to 1 when that
// Envoy ACKs that type again or goes away; the hash is the served
// snapshot's, 0 while rejected, as ingress-nginx's ConfigSuccess.
func TestReloads(t *testing.T) {
	c := New(ctl)
	at := time.Unix(1700000000, 500000000)
	c.now = func() time.Time { return at }
	if v := value(t, c, "config_last_reload_successful"); v != 1 {
		t.Errorf("before any answer: last_reload_successful = %v, want 1 (nothing rejected)", v)
	}
	if v := value(t, c, "config_last_reload_successful_timestamp_seconds"); v != 0 {
		t.Errorf("before any ACK: timestamp = %v, want 0", v)
	}
	c.Published(map[string]string{"listener": "a", "cluster": "b"})
	hash := value(t, c, "config_hash")
	if hash == 0 || hash >= 1<<53 {
		t.Errorf("config_hash = %v", hash)
	}

	c.Answered("sotw/1", "listener", "v1", true)
	c.Answered("sotw/1", "cluster", "v1", true)
	if v := value(t, c, "success"); v != 2 {
		t.Errorf("success = %v, want 2", v)
	}
	if v := value(t, c, "config_last_reload_successful_timestamp_seconds"); v != 1700000000.5 {
		t.Errorf("timestamp = %v", v)
	}

	c.Answered("sotw/1", "listener", "v2", false)
	c.Answered("delta/1", "cluster", "v2", true) // another Envoy's ACK does not hide it
	if v := value(t, c, "config_last_reload_successful"); v != 0 {
		t.Errorf("after a NACK: last_reload_successful = %v, want 0", v)
	}
	if v := value(t, c, "config_hash"); v != 0 {
		t.Errorf("after a NACK: config_hash = %v, want 0", v)
	}
	if v := value(t, c, "errors"); v != 1 {
		t.Errorf("errors = %v, want 1", v)
	}

	at = at.Add(time.Minute)
	c.Answered("sotw/1", "listener", "v3", true)
	if v := value(t, c, "config_last_reload_successful"); v != 1 {
		t.Errorf("after the ACK: last_reload_successful = %v, want 1", v)
	}
	if v := value(t, c, "config_hash"); v != hash {
		t.Errorf("config_hash = %v, want %v", v, hash)
	}
	if v := value(t, c, "config_last_reload_successful_timestamp_seconds"); v != 1700000060.5 {
		t.Errorf("timestamp = %v", v)
	}

	c.Answered("sotw/2", "route", "v3", false)
	c.StreamClosed("sotw/2")
	if v := value(t, c, "config_last_reload_successful"); v != 1 {
		t.Errorf("after the rejecting Envoy left: last_reload_successful = %v, want 1", v)
	}
	if v := value(t, c, "success"); v != 4 {
		t.Errorf("success = %v, want 4", v)
	}
	if v := value(t, c, "errors"); v != 2 {
		t.Errorf("errors = %v, want 2", v)
	}
}

// ssl_expire_time_seconds and ssl_certificate_info carry ingress-nginx's
// labels (namespace and name of the Secret, class, host, identifier) per
// host served with a certificate; a certificate no longer served goes.
func TestCertificates(t *testing.T) {
	ca := framework.NewCA(t, "test CA")
	kp := ca.Issue(t, "cafe", "cafe.example.com", "tea.example.com")
	cert := &ir.Certificate{Name: "shop/cafe-tls", Secret: types.NamespacedName{Namespace: "shop", Name: "cafe-tls"}, Chain: kp.CertPEM}
	c := New(ctl)
	c.Translated(&ir.IR{
		VirtualHosts: []*ir.VirtualHost{
			{Host: "cafe.example.com", Certificate: cert.Name},
			{Host: "plain.example.com"},
			{Host: "tea.example.com", Certificate: cert.Name},
		},
		Certificates: []*ir.Certificate{cert},
	})
	ms := family(t, c, "ssl_expire_time_seconds")
	if len(ms) != 2 {
		t.Fatalf("ssl_expire_time_seconds: %d metrics, want one per TLS host", len(ms))
	}
	id := "-" + kp.Cert.SerialNumber.String()
	for i, host := range []string{"cafe.example.com", "tea.example.com"} {
		want := map[string]string{"namespace": "shop", "class": ctl.Class, "host": host, "secret_name": "cafe-tls", "identifier": id}
		if got := labels(ms[i]); !equal(got, want) {
			t.Errorf("labels %v, want %v", got, want)
		}
		if v := ms[i].GetGauge().GetValue(); v != float64(kp.Cert.NotAfter.Unix()) {
			t.Errorf("%s expires %v, want %v", host, v, kp.Cert.NotAfter.Unix())
		}
	}
	info := family(t, c, "ssl_certificate_info")
	if len(info) != 2 {
		t.Fatalf("ssl_certificate_info: %d metrics", len(info))
	}
	l := labels(info[0])
	if l["issuer_common_name"] != "test CA" || l["serial_number"] != kp.Cert.SerialNumber.String() ||
		l["public_key_algorithm"] != "ECDSA" || l["identifier"] != id || info[0].GetGauge().GetValue() != 1 {
		t.Errorf("ssl_certificate_info %v", l)
	}

	c.Translated(&ir.IR{VirtualHosts: []*ir.VirtualHost{{Host: "cafe.example.com"}}})
	if ms := family(t, c, "ssl_expire_time_seconds"); len(ms) != 0 {
		t.Errorf("a certificate no longer served is still shown: %v", ms)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// leader_election_status follows the elector's callbacks, as ingress-nginx's
// OnStartedLeading and OnStoppedLeading, labelled with the lease's name.
func TestLeaderElection(t *testing.T) {
	c := New(ctl)
	if ms := family(t, c, "leader_election_status"); len(ms) != 0 {
		t.Errorf("before any election: %v", ms)
	}
	c.OnStoppedLeading("ingress-xds-leader")
	if v := value(t, c, "leader_election_status"); v != 0 {
		t.Errorf("follower: %v", v)
	}
	c.OnStartedLeading("ingress-xds-leader")
	if v := value(t, c, "leader_election_status"); v != 1 {
		t.Errorf("leader: %v", v)
	}
	if l := labels(family(t, c, "leader_election_status")[0]); l["name"] != "ingress-xds-leader" {
		t.Errorf("labels %v", l)
	}
	b := family(t, c, "build_info")
	if len(b) != 1 || labels(b[0])["release"] != "v1" || !strings.Contains(labels(b[0])["controller_class"], "ingress-nginx") {
		t.Errorf("build_info %v", b)
	}
}

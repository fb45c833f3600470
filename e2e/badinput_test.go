package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestBadInputThroughEnvoy puts Ingresses from docs/bad-input.md next to a
// healthy one, in a running `ingress-xds serve --manifests` with a real
// Envoy, and checks the promises of that page end to end: the healthy
// Ingress keeps answering from its backend over HTTP and HTTPS before,
// during and after the change; each broken piece does what the table says
// (503 on that route only, rule ignored, HTTP only); Envoy rejects no
// update; and `ingress-xds translate -f` on the same directory names every
// problem.
func TestBadInputThroughEnvoy(t *testing.T) {
	backends := echoBackends(t, "alpha", "beta", "gamma")
	ca := framework.NewCA(t, "ingress-xds e2e CA")
	roots := ca.Pool()
	good := ca.Issue(t, "good", "good.example.com")
	// Another certificate for good.example.com, brought by a newer
	// Ingress: it must never be served.
	usurper := ca.Issue(t, "usurper", "good.example.com")
	weak := ca.IssueWithKey(t, framework.NewRSAKey(t, 1024), "weak", "weak.example.com")
	opaque := ca.Issue(t, "opaque", "opaque.example.com")
	nokey := ca.Issue(t, "nokey", "nokey.example.com")

	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(backends...) + badServicesYAML},
		manifest{"secrets.yaml", tlsSecretYAML("good-cert", good.CertPEM, good.KeyPEM) +
			tlsSecretYAML("usurper-cert", usurper.CertPEM, usurper.KeyPEM) +
			tlsSecretYAML("weak-cert", weak.CertPEM, weak.KeyPEM) +
			strings.Replace(tlsSecretYAML("opaque-cert", opaque.CertPEM, opaque.KeyPEM), "type: kubernetes.io/tls", "type: Opaque", 1) +
			tlsSecretYAML("nokey-cert", nokey.CertPEM, nil)},
		manifest{"good.yaml", goodIngressYAML})
	dir, envoy := fm.dir, fm.envoy
	https := envoy.HTTPSAddress
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds",
			"http.ingress_http.rds.ingress_http", "http.ingress_https.rds.https/good.example.com", "sds.default/good-cert")
	})
	goodHTTP := func() error { return envoy.Expect("good.example.com", "/", http.StatusOK, "alpha") }
	goodHTTPS := func() error {
		r, err := framework.GetTLS(https, "good.example.com", roots, "good.example.com", "/")
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK || r.Backend != "alpha" {
			return fmt.Errorf("HTTPS good.example.com: got %s, want 200 from alpha", r)
		}
		return sameCertificate(r.Certificate, good)
	}
	framework.Eventually(t, convergeTimeout, "the good Ingress served over HTTP", goodHTTP)
	framework.Eventually(t, convergeTimeout, "the good Ingress served over HTTPS", goodHTTPS)

	// From here until the broken input is gone again, every request to the
	// good Ingress must succeed.
	probe := startProbe(t, goodHTTP, goodHTTPS)

	writeManifest(t, dir, "broken.yaml", brokenIngressesYAML())
	took := framework.Eventually(t, convergeTimeout, "the broken Ingresses applied", func() error {
		return envoy.Expect("broken.example.com", "/ok", http.StatusOK, "beta")
	})
	t.Logf("measured: broken manifests to routes in %s", took.Round(time.Millisecond))

	t.Run("each problem stays where it is", func(t *testing.T) {
		expectAll(t, envoy, []framework.RouteCase{
			// A missing Service, port, or a Service we may not use: 503 on
			// that route only.
			{Host: "broken.example.com", Path: "/ok", Status: http.StatusOK, Backend: "beta"},
			{Host: "broken.example.com", Path: "/missing-service", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/missing-port", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/missing-port-name", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/udp", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/external-name", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/invalid-service-name", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/no-service", Status: http.StatusServiceUnavailable, Backend: ""},
			{Host: "broken.example.com", Path: "/elsewhere", Status: http.StatusNotFound, Backend: ""},
			// Invalid hosts: those rules are ignored, the valid one is not.
			{Host: "fine.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			{Host: "bad.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "bad.example.com:8080", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "192.0.2.1", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "a.x.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			{Host: "xn--bcher-kva.example.com", Path: "/", Status: http.StatusNotFound, Backend: ""},
			// Invalid paths are ignored, the valid ones served; an
			// injection attempt in a path goes nowhere.
			{Host: "paths.example.com", Path: "/ok", Status: http.StatusOK, Backend: "beta"},
			{Host: "paths.example.com", Path: "/relative", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/search", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/inject", Status: http.StatusNotFound, Backend: ""},
			{Host: "paths.example.com", Path: "/a", Status: http.StatusNotFound, Backend: ""},
			// Duplicates within one Ingress: the first is served.
			{Host: "dup.example.com", Path: "/x", Status: http.StatusOK, Backend: "alpha"},
			// Too many paths: the first 1000 are served, the rest ignored.
			{Host: "many.example.com", Path: "/p0", Status: http.StatusOK, Backend: "beta"},
			{Host: "many.example.com", Path: "/p999", Status: http.StatusOK, Backend: "beta"},
			{Host: "many.example.com", Path: "/p1000", Status: http.StatusNotFound, Backend: ""},
			// Unusable TLS: served over plain HTTP.
			{Host: "weak.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			{Host: "opaque.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			{Host: "nokey.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			{Host: "othernamespace.example.com", Path: "/", Status: http.StatusOK, Backend: "gamma"},
			// A newer Ingress cannot take the good one's path...
			{Host: "good.example.com", Path: "/", Status: http.StatusOK, Backend: "alpha"},
			// ...but its own path on that host is merged.
			{Host: "good.example.com", Path: "/usurper-own", Status: http.StatusOK, Backend: "beta"},
		})
		// A Host with characters no DNS name has never reaches a backend.
		if r, err := envoy.Get("bad_host!.example.com", "/"); err != nil {
			t.Errorf("GET bad_host!.example.com: %v", err)
		} else if r.Backend != "" || (r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest) {
			t.Errorf("GET bad_host!.example.com: got %s, want 404 or 400 from envoy", r)
		} else {
			t.Logf("GET bad_host!.example.com: %s", r)
		}
		// ... and no HTTPS at all for the hosts whose Secret is unusable.
		for _, host := range []string{"weak.example.com", "opaque.example.com", "nokey.example.com", "othernamespace.example.com"} {
			if cert, err := framework.Handshake(https, host); err == nil {
				t.Errorf("TLS handshake for %s succeeded with %q, want a failure", host, describe(cert))
			}
		}
		// The good Ingress keeps its certificate, not the newer one's, and
		// its routes over HTTPS.
		if err := goodHTTPS(); err != nil {
			t.Error(err)
		}
	})

	// Checked again when the test ends; now too, while the clusters the
	// broken Ingresses use still exist and have their EDS stats.
	assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "cluster.default/beta/80",
		"http.ingress_http.rds.ingress_http", "http.ingress_https.rds.https/good.example.com", "sds.default/good-cert")

	t.Run("translate -f names every problem", func(t *testing.T) {
		testTranslateProblems(t, dir)
	})

	if err := os.Remove(filepath.Join(dir, "broken.yaml")); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, convergeTimeout, "the broken Ingresses removed", func() error {
		return envoy.Expect("broken.example.com", "/ok", http.StatusNotFound, "")
	})
	// Without the newer Ingress, its path falls to the good one's "/".
	if err := envoy.Expect("good.example.com", "/usurper-own", http.StatusOK, "alpha"); err != nil {
		t.Error(err)
	}
	probe.stop(t)
}

// testTranslateProblems runs `ingress-xds translate -f DIR` and checks that
// its problems name each broken Ingress with the reasons of
// docs/bad-input.md, and nothing about the good one.
func testTranslateProblems(t *testing.T, dir string) {
	cmd := exec.Command(framework.IngressXDS(t), "translate", "-f", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ingress-xds translate -f %s: %v\n%s", dir, err, stderr.String())
	}
	// The undecodable document is skipped and said to be.
	if !strings.Contains(stderr.String(), "broken.yaml") {
		t.Errorf("translate did not warn about the undecodable document in broken.yaml; stderr: %q", stderr.String())
	}
	var doc struct {
		Problems []struct {
			Kind, Namespace, Name, Reason, Message string
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("translate output is not JSON: %v", err)
	}
	got := map[string]int{}
	for _, p := range doc.Problems {
		got[p.Name+" "+p.Reason]++
		if p.Name == "good" {
			t.Errorf("problem reported for the good Ingress: %+v", p)
		}
		if p.Kind != "Ingress" || p.Namespace != "default" || p.Message == "" {
			t.Errorf("problem without kind, namespace or message: %+v", p)
		}
	}
	want := map[string]int{
		"broken ServiceNotFound":       1,
		"broken ServicePortNotFound":   3, // number, name, UDP
		"broken ExternalNameRefused":   1,
		"broken InvalidBackend":        2, // Bad_Name, no service
		"bad-hosts InvalidHost":        5,
		"bad-paths InvalidPath":        4,
		"dup DuplicateRule":            1,
		"many TooManyPaths":            1,
		"bad-tls InvalidTLSSecret":     3, // weak key, Opaque (unseen), no key
		"bad-tls InvalidTLS":           2, // other namespace, no hosts
		"usurper RuleConflict":         1,
		"usurper TLSConflict":          1,
		"bad-hosts ServiceNotFound":    0,
		"broken InvalidTLSSecret":      0,
		"usurper InvalidTLSSecret":     0,
		"many ServiceNotFound":         0,
		"dup RuleConflict":             0,
		"bad-paths ServiceNotFound":    0,
		"bad-paths UnsupportedBackend": 0,
	}
	for key, n := range want {
		if got[key] != n {
			t.Errorf("translate reported %d problems %q, want %d", got[key], key, n)
		}
	}
	if t.Failed() {
		for _, p := range doc.Problems {
			t.Logf("problem: %s/%s %s: %s", p.Namespace, p.Name, p.Reason, p.Message)
		}
	}
}

// probe calls its checks in a loop until stopped, and keeps every failure.
type probe struct {
	done     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	rounds   int
	failures []string
}

func startProbe(t *testing.T, checks ...func() error) *probe {
	p := &probe{done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			for _, check := range checks {
				err := check()
				p.mu.Lock()
				if err != nil {
					p.failures = append(p.failures, time.Now().Format("15:04:05.000")+" "+err.Error())
				}
				p.mu.Unlock()
			}
			p.mu.Lock()
			p.rounds++
			p.mu.Unlock()
		}
	}()
	// A test that stops early still stops the probe.
	t.Cleanup(func() { p.halt() })
	return p
}

func (p *probe) halt() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	p.wg.Wait()
}

// stop ends the probe and fails the test if any check failed, or if it
// never ran (a probe that checked nothing proves nothing).
func (p *probe) stop(t *testing.T) {
	t.Helper()
	p.halt()
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("probe: %d rounds, %d failures", p.rounds, len(p.failures))
	if p.rounds == 0 {
		t.Error("the probe never completed a round")
	}
	for i, f := range p.failures {
		if i == 10 {
			t.Errorf("... and %d more failures", len(p.failures)-i)
			break
		}
		t.Errorf("the good Ingress failed during the change: %s", f)
	}
}

// badServicesYAML: a Service with only a UDP port, an ExternalName Service
// (refused without --enable-external-name) and a Service with a named port.
const badServicesYAML = `---
apiVersion: v1
kind: Service
metadata: {name: udp-only, namespace: default}
spec:
  ports: [{port: 80, protocol: UDP}]
---
apiVersion: v1
kind: Service
metadata: {name: external, namespace: default}
spec:
  type: ExternalName
  externalName: example.org
  ports: [{port: 80}]
`

const goodIngressYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: good, namespace: default, creationTimestamp: "2020-01-01T00:00:00Z"}
spec:
  tls: [{hosts: [good.example.com], secretName: good-cert}]
  rules:
  - host: good.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// brokenIngressesYAML holds the broken Ingresses, one per kind of trouble,
// and a document that does not decode in their midst.
func brokenIngressesYAML() string {
	var many strings.Builder
	for i := range 1001 {
		fmt.Fprintf(&many, "      - {path: /p%d, pathType: Exact, backend: {service: {name: beta, port: {number: 80}}}}\n", i)
	}
	return `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: broken, namespace: default}
spec:
  rules:
  - host: broken.example.com
    http:
      paths:
      - {path: /ok, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /missing-service, pathType: Prefix, backend: {service: {name: nope, port: {number: 80}}}}
      - {path: /missing-port, pathType: Prefix, backend: {service: {name: beta, port: {number: 81}}}}
      - {path: /missing-port-name, pathType: Prefix, backend: {service: {name: beta, port: {name: https}}}}
      - {path: /udp, pathType: Prefix, backend: {service: {name: udp-only, port: {number: 80}}}}
      - {path: /external-name, pathType: Prefix, backend: {service: {name: external, port: {number: 80}}}}
      - {path: /invalid-service-name, pathType: Prefix, backend: {service: {name: Bad_Name, port: {number: 80}}}}
      - {path: /no-service, pathType: Prefix, backend: {}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad-hosts, namespace: default}
spec:
  rules:
  - host: "bad_host!.example.com"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: "bad.example.com:8080"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: "192.0.2.1"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: "a.*.example.com"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: "bücher.example.com"
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
  - host: fine.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: undecodable, namespace: default}
spec:
  rules: 42
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad-paths, namespace: default}
spec:
  rules:
  - host: paths.example.com
    http:
      paths:
      - {path: relative, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: "/search?q=1", pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: "/inject\r\nx-injected: 1", pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: "/a b", pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /ok, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: dup, namespace: default}
spec:
  rules:
  - host: dup.example.com
    http:
      paths:
      - {path: /x, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}
      - {path: /x/, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: bad-tls, namespace: default}
spec:
  tls:
  - {hosts: [weak.example.com], secretName: weak-cert}
  - {hosts: [opaque.example.com], secretName: opaque-cert}
  - {hosts: [nokey.example.com], secretName: nokey-cert}
  - {hosts: [othernamespace.example.com], secretName: other/good-cert}
  - {secretName: good-cert}
  rules:
  - host: weak.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
  - host: opaque.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
  - host: nokey.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
  - host: othernamespace.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: gamma, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: usurper, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  tls: [{hosts: [good.example.com], secretName: usurper-cert}]
  rules:
  - host: good.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
      - {path: /usurper-own, pathType: Prefix, backend: {service: {name: beta, port: {number: 80}}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: many, namespace: default}
spec:
  rules:
  - host: many.example.com
    http:
      paths:
` + many.String()
}

package xds

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
	"github.com/ingress-xds/ingress-xds/kube"
	"github.com/ingress-xds/ingress-xds/translate"
)

// The README's section "Inspecting with grpcurl" is what this test runs.
const (
	inspectingDoc     = "../README.md"
	inspectingSection = "## Inspecting with grpcurl"
)

// docCheck is what the output of one documented command must, and must
// not, contain. Each may name {listenerVersion}, replaced by the version
// served.
type docCheck struct {
	want, reject []string
}

// Every grpcurl and curl command in the README's grpcurl section, exactly as printed,
// run with the real grpcurl against a running server with a real Envoy
// connected. Only the addresses change, to the test's ports. A command in
// the document that this test does not know, or the reverse, fails it, so
// that the document and the test cannot drift apart.
func TestInspectingDocCommands(t *testing.T) {
	checks := map[string]docCheck{
		`grpcurl -plaintext localhost:18000 list`: {want: []string{
			"ingressxds.inspect.v1.Inspector", "envoy.service.status.v3.ClientStatusDiscoveryService",
			"envoy.service.discovery.v3.AggregatedDiscoveryService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
		}},
		`grpcurl -plaintext localhost:18000 describe ingressxds.inspect.v1.Inspector`: {want: []string{"rpc GetSnapshot"}},
		`grpcurl -plaintext -d '{"versions_only": true}' localhost:18000 ingressxds.inspect.v1.Inspector/GetSnapshot`: {
			want:   []string{`"published": true`, `"version": "{listenerVersion}"`, `"name": "default/coffee/80"`, `"name": "ingress_http"`},
			reject: []string{`"resource":`},
		},
		`grpcurl -plaintext -d '{"types": ["cluster"]}' localhost:18000 ingressxds.inspect.v1.Inspector/GetSnapshot`: {
			want:   []string{`"@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster"`, `"name": "default/coffee/80"`, `"name": "default/tea/80"`},
			reject: []string{"Listener"},
		},
		`grpcurl -plaintext -d '{"types": ["endpoint"], "names": ["default/coffee/80"]}' localhost:18000 ingressxds.inspect.v1.Inspector/GetSnapshot`: {
			want:   []string{`"@type": "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"`, `"clusterName": "default/coffee/80"`},
			reject: []string{"default/tea/80"},
		},
		`grpcurl -plaintext -d '{"types": ["secret"]}' localhost:18000 ingressxds.inspect.v1.Inspector/GetSnapshot`: {
			want:   []string{`"name": "default/secure-tls"`, `"privateKey": {`, `"inlineString": "[redacted]"`, `"certificateChain"`},
			reject: []string{"{keyBase64}", "PRIVATE KEY"},
		},
		`grpcurl -plaintext localhost:18000 envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus`: {
			want: []string{`"id": "envoy-doc-0"`, `"id": "other-doc-1"`, `"clientStatus": "ACKED"`, `"configStatus": "SYNCED"`,
				`"name": "default/coffee/80"`, `"versionInfo": "{listenerVersion}"`},
			reject: []string{`"extensions": [`, "NACKED"},
		},
		`grpcurl -plaintext -d '{"node_matchers": [{"node_id": {"prefix": "envoy-"}}]}' localhost:18000 envoy.service.status.v3.ClientStatusDiscoveryService/FetchClientStatus`: {
			want:   []string{`"id": "envoy-doc-0"`, `"clientStatus": "ACKED"`},
			reject: []string{"other-doc-1"},
		},
		`grpcurl -plaintext localhost:18000 grpc.health.v1.Health/Check`:   {want: []string{`"status": "SERVING"`}},
		`curl -s localhost:8000/readyz`:                                    {want: []string{"ok"}},
		`curl -s localhost:8000/metrics | grep '^ingress_xds_nacks_total'`: {want: []string{`ingress_xds_nacks_total{protocol="sotw",type="listener"} 0`}},
	}

	grpcurl := toolPath(t, "grpcurl")
	toolPath(t, "envoy")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is needed to run the documented commands: %v", err)
	}
	commands := documentedCommands(t)

	// The server, as `serve --manifests` runs it: examples/ and a TLS
	// Ingress whose key must never be shown.
	dir := t.TempDir()
	keyPEM := writeManifests(t, dir)
	st, err := kube.LoadState(dir, kube.ClassFilter{ClassName: kube.DefaultClassName, WatchClassless: true})
	if err != nil {
		t.Fatalf("loading manifests: %v", err)
	}
	res, err := translate.Translate(st, translate.Options{
		HTTPPort: uint32(freePort(t)), HTTPSPort: uint32(freePort(t)), ListenAddress: "127.0.0.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t)
	if _, err := ts.Publish(context.Background(), res.Resources); err != nil {
		t.Fatal(err)
	}
	httpAddr := serveHTTPHandler(t, ts)
	for _, id := range []string{"envoy-doc-0", "other-doc-1"} {
		e := startEnvoy(t, ts.addr, id, false, nil)
		waitSynced(t, ts, e.nodeID)
	}
	replacer := strings.NewReplacer(
		"{listenerVersion}", ts.Snapshot().GetVersion(resource.ListenerType),
		"{keyBase64}", base64.StdEncoding.EncodeToString(keyPEM),
	)

	seen := map[string]bool{}
	for _, cmd := range commands {
		seen[cmd] = true
		check, ok := checks[cmd]
		if !ok {
			t.Errorf("the README's grpcurl section has a command this test does not check; add it here:\n%s", cmd)
			continue
		}
		run := strings.NewReplacer("localhost:18000", ts.addr, "localhost:8000", httpAddr).Replace(cmd)
		sh := exec.Command("bash", "-o", "pipefail", "-c", run)
		sh.Env = append(os.Environ(), "PATH="+filepath.Dir(grpcurl)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Errorf("%s\nfailed: %v\n%s", cmd, err, out)
			continue
		}
		for _, w := range check.want {
			if w = replacer.Replace(w); !strings.Contains(string(out), w) {
				t.Errorf("%s\noutput lacks %q:\n%s", cmd, w, head(string(out), 80))
			}
		}
		for _, r := range check.reject {
			if r = replacer.Replace(r); strings.Contains(string(out), r) {
				t.Errorf("%s\noutput contains %q, which it must not:\n%s", cmd, r, head(string(out), 80))
			}
		}
	}
	for cmd := range checks {
		if !seen[cmd] {
			t.Errorf("this test checks a command that the README's grpcurl section no longer has:\n%s", cmd)
		}
	}
}

// documentedCommands returns the grpcurl and curl lines of the document's
// sh blocks.
func documentedCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(inspectingDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	inBlock, inSection := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = line == inspectingSection
		}
		if !inSection {
			continue
		}
		switch {
		case strings.HasPrefix(line, "```"):
			inBlock = !inBlock && line == "```sh"
		case inBlock && (strings.HasPrefix(line, "grpcurl ") || strings.HasPrefix(line, "curl ")):
			cmds = append(cmds, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cmds) == 0 {
		t.Fatal("no commands found in " + inspectingDoc)
	}
	return cmds
}

// writeManifests copies examples/ and adds a TLS Ingress with a fresh key.
// It returns the key, which no command may show.
func writeManifests(t *testing.T, dir string) []byte {
	t.Helper()
	cafe, err := os.ReadFile("../examples/cafe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cafe.yaml"), cafe, 0o644); err != nil {
		t.Fatal(err)
	}
	pair := framework.NewCA(t, "inspecting doc CA").Issue(t, "secure.example.com", "secure.example.com")
	tls := fmt.Sprintf(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: secure
  namespace: default
spec:
  tls:
  - hosts: [secure.example.com]
    secretName: secure-tls
  rules:
  - host: secure.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: coffee
            port:
              number: 80
---
apiVersion: v1
kind: Secret
metadata:
  name: secure-tls
  namespace: default
type: kubernetes.io/tls
data:
  tls.crt: %s
  tls.key: %s
`, base64.StdEncoding.EncodeToString(pair.CertPEM), base64.StdEncoding.EncodeToString(pair.KeyPEM))
	if err := os.WriteFile(filepath.Join(dir, "secure.yaml"), []byte(tls), 0o644); err != nil {
		t.Fatal(err)
	}
	return pair.KeyPEM
}

// serveHTTPHandler serves the server's /healthz, /readyz and /metrics (as
// metricsEndpoints stands them in for serve's) and returns the address.
func serveHTTPHandler(t *testing.T, ts *testServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: metricsEndpoints(ts.Server), ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go srv.Serve(lis)
	t.Cleanup(func() { srv.Close() })
	return lis.Addr().String()
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	statusservice "github.com/envoyproxy/go-control-plane/envoy/service/status/v3"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// The xDS cluster of the bootstrap, as Envoy's stats name it.
const xdsCluster = "cluster.ingress_xds."

// TestXDSMutualTLS runs serve and a real Envoy over mutual TLS with the
// certificates `ingress-xds certgen` wrote: Envoy gets its configuration
// over TLS; Envoys and grpcurl without a valid client certificate, and
// Envoys that cannot verify the server, get nothing; and certificates
// rotated on disk take effect without restarting the control plane, while
// the Envoy already connected keeps its stream.
func TestXDSMutualTLS(t *testing.T) {
	b := echoBackends(t, "coffee", "tea")
	certs := framework.CertGen(t)
	fm := startFileMode(t, certs,
		manifest{"services.yaml", servicesYAML(b[0], b[1])},
		manifest{"cafe.yaml", framework.CafeIngressYAML("default", "coffee")})
	dir, cp, envoy := fm.dir, fm.cp, fm.envoy
	framework.Eventually(t, convergeTimeout, "first route served over mutual TLS xDS", func() error {
		return envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "coffee")
	})
	if n := stat(t, envoy, xdsCluster+"ssl.handshake"); n < 1 {
		t.Fatalf("%sssl.handshake = %d: Envoy's xDS connection is not TLS", xdsCluster, n)
	}

	other := framework.CertGen(t) // another CA, with certificates of its own
	t.Run("envoys without a valid certificate get nothing", func(t *testing.T) {
		for _, c := range []struct {
			name string
			o    framework.EnvoyOptions
			// stat is the counter of the xDS cluster that must move: the
			// refusal must happen for the reason the case is about.
			stat string
		}{
			{"plaintext", framework.EnvoyOptions{Plaintext: true}, "upstream_cx_destroy_remote"},
			{"client certificate of another CA",
				framework.EnvoyOptions{TLS: &framework.TLSFiles{Cert: other.Client.Cert, Key: other.Client.Key, CA: certs.Client.CA}},
				"ssl.connection_error"},
			{"server certificate of an untrusted CA",
				framework.EnvoyOptions{TLS: &framework.TLSFiles{Cert: certs.Client.Cert, Key: certs.Client.Key, CA: other.Client.CA}},
				"ssl.fail_verify_error"},
			{"server certificate for another name", framework.EnvoyOptions{ServerName: "xds.example.com"}, "ssl.fail_verify_san"},
		} {
			t.Run(c.name, func(t *testing.T) {
				c.o.NoWait = true
				e := framework.StartEnvoyWith(t, cp, c.o)
				// Two attempts, each refused: Envoy retried and still has
				// nothing.
				framework.Eventually(t, convergeTimeout, "envoy refused twice", func() error {
					stats, err := e.Stats(`^` + strings.ReplaceAll(xdsCluster, ".", `\.`) + `(upstream_cx_total|upstream_cx_destroy_remote|ssl\..*)$`)
					if err != nil {
						return err
					}
					if stats[xdsCluster+c.stat] < 2 {
						return fmt.Errorf("stats %v", stats)
					}
					t.Logf("refused: %v", stats)
					return nil
				})
				for _, s := range []string{"listener_manager.lds.update_success", "cluster_manager.cds.update_success"} {
					if n := stat(t, e, s); n != 0 {
						t.Errorf("%s = %d: the refused Envoy got configuration", s, n)
					}
				}
				if err := e.Ready(); err == nil {
					t.Error("the refused Envoy is ready")
				}
				if nodes := connectedNodes(t, cp); nodes[e.NodeID] {
					t.Errorf("CSDS lists %s as connected: %v", e.NodeID, nodes)
				}
			})
		}
	})

	t.Run("grpcurl needs the client certificate", func(t *testing.T) {
		out, err := cp.Grpcurl(t, nil, "list")
		if err != nil || !strings.Contains(out, "ingressxds.inspect.v1.Inspector") {
			t.Errorf("grpcurl with the client certificate: %v\n%s", err, out)
		}
		for name, transport := range map[string][]string{
			"plaintext":             {"-plaintext"},
			"no client certificate": {"-cacert", certs.Client.CA},
			"another CA's client":   {"-cacert", certs.Client.CA, "-cert", other.Client.Cert, "-key", other.Client.Key},
		} {
			if out, err := cp.GrpcurlAs(t, transport, nil, "list"); err == nil {
				t.Errorf("grpcurl with %s was served:\n%s", name, out)
			}
		}
	})

	t.Run("rotated certificates take effect without a restart", func(t *testing.T) {
		oldClient := copyTLSFiles(t, certs.Client)
		pid := cp.Pid()
		certs.Regenerate(t) // a new CA and new certificates, over the old files
		if err := health(t, cp, certs.Client); err != nil {
			t.Errorf("a client of the new CA after the rotation: %v", err)
		}
		if err := health(t, cp, oldClient); err == nil {
			t.Error("a client certificate of the old CA is still accepted after the rotation")
		}
		if cp.Pid() != pid || cp.Exited() != nil {
			t.Fatalf("the control plane restarted or exited: %v", cp.Exited())
		}
		if !strings.Contains(cp.Output(), "xDS TLS certificates reloaded") {
			t.Error("the control plane did not log the reload")
		}
		// The Envoy connected before keeps its stream, and its updates.
		writeManifest(t, dir, "cafe.yaml", framework.CafeIngressYAML("default", "tea"))
		framework.Eventually(t, convergeTimeout, "a change reaches the Envoy connected before the rotation", func() error {
			return envoy.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
		})
		assertNothingRejected(t, envoy)
		// An Envoy started with the new certificates gets configuration.
		envoy.Stop()
		fresh := framework.StartEnvoy(t, cp)
		framework.Eventually(t, convergeTimeout, "an Envoy with the new certificates is served", func() error {
			return fresh.Expect("cafe.example.com", "/coffee", http.StatusOK, "tea")
		})
		assertNothingRejected(t, fresh)
	})
}

// health makes a gRPC health check over mutual TLS with files, and returns
// nil when the control plane served it.
func health(t *testing.T, cp *framework.ControlPlane, files framework.TLSFiles) error {
	t.Helper()
	cfg, err := files.ClientConfig("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	conn := framework.DialXDSWith(t, cp, credentials.NewTLS(cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// connectedNodes returns the node ids CSDS reports.
func connectedNodes(t *testing.T, cp *framework.ControlPlane) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := statusservice.NewClientStatusDiscoveryServiceClient(cp.DialXDS(t)).FetchClientStatus(ctx, &statusservice.ClientStatusRequest{})
	if err != nil {
		t.Fatalf("CSDS: %v", err)
	}
	nodes := map[string]bool{}
	for _, c := range resp.GetConfig() {
		nodes[c.GetNode().GetId()] = true
	}
	return nodes
}

// copyTLSFiles copies files into a new directory, to keep a version that
// is about to be overwritten.
func copyTLSFiles(t *testing.T, files framework.TLSFiles) framework.TLSFiles {
	t.Helper()
	dir := t.TempDir()
	out := framework.TLSFiles{}
	for _, f := range []struct{ from, to *string }{{&files.Cert, &out.Cert}, {&files.Key, &out.Key}, {&files.CA, &out.CA}} {
		data, err := os.ReadFile(*f.from)
		if err != nil {
			t.Fatal(err)
		}
		*f.to = filepath.Join(dir, filepath.Base(*f.from))
		if err := os.WriteFile(*f.to, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

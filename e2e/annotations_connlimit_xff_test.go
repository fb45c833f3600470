package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestLimitConnectionsTrustedHops checks that limit-connections counts the
// client address the listener settled on, behind a trusted proxy (serve
// --trusted-forwarded-hops 1): the X-Forwarded-For address, as RBAC and
// the rate limits take it, and as ingress-nginx's limit_conn key
// ($binary_remote_addr after the realip module, with
// use-forwarded-headers) does. One place per client: a request held open
// for 203.0.113.7 takes it from every connection forwarding for that
// address, not from one forwarding for another.
func TestLimitConnectionsTrustedHops(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ns := framework.NewNetns(t)
	client := ns.Client()
	dir := t.TempDir()
	writeManifest(t, dir, "services.yaml", echoServicesYAML(alpha))
	writeManifest(t, dir, "ingresses.yaml", strings.Join([]string{
		accessIngress("single", "single.example.com", "/", map[string]string{nginxKey + "limit-connections": "1"}),
	}, ""))
	cp := framework.StartControlPlane(t, "--manifests", dir, "--trusted-forwarded-hops", "1")
	cp.WaitReady(t)
	envoy := framework.StartEnvoy(t, cp)
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	port := cp.HTTPPort
	framework.Eventually(t, convergeTimeout, "the host served", func() error {
		return expectForwarded(client, port, "single.example.com", "203.0.113.9", http.StatusOK, "alpha")
	})

	conn, err := ns.Dial(context.Background(), "tcp", net.JoinHostPort(client.Address, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers at once, then a line a second for a minute.
	fmt.Fprintf(conn, "GET /?chunks=60&every=1s HTTP/1.1\r\nHost: single.example.com\r\nX-Forwarded-For: 203.0.113.7\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the held request for 203.0.113.7: %v, %v", resp, err)
	}
	if err := expectForwarded(client, port, "single.example.com", "203.0.113.7", http.StatusServiceUnavailable, ""); err != nil {
		t.Errorf("another request for 203.0.113.7, its place taken: %v", err)
	}
	if err := expectForwarded(client, port, "single.example.com", "203.0.113.8", http.StatusOK, "alpha"); err != nil {
		t.Errorf("a request for 203.0.113.8 from the same peer: %v", err)
	}
}

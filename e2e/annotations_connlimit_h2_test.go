package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestLimitConnectionsHTTP2 checks that over HTTP/2 each stream counts, as
// nginx's limit_conn counts each HTTP/2 stream being processed (its
// ngx_http_v2 requests): five requests at once on one connection with
// limit-connections 2 get exactly 2 answers and 3 refusals, and a full
// response comes back whole through the filter (Envoy adds empty trailers
// for the service: the client must not see a broken stream).
func TestLimitConnectionsHTTP2(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	ns := framework.NewNetns(t)
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", strings.Join([]string{
			accessIngress("pair", "pair.example.com", "/", map[string]string{nginxKey + "limit-connections": "2"}),
		}, "")})
	port := fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, fm.envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	// One connection (HTTP/2 without TLS, prior knowledge), from the
	// namespace's address.
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		Proxy:           nil,
		Protocols:       &protocols,
		MaxConnsPerHost: 1,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			return ns.Dial(ctx, network, address)
		},
		MaxIdleConnsPerHost: 1,
	}}
	defer client.CloseIdleConnections()
	url := "http://" + net.JoinHostPort(ns.HostIP, strconv.Itoa(port))
	get := func(path string) (int, string, string, error) {
		req, err := http.NewRequest(http.MethodGet, url+path, nil)
		if err != nil {
			return 0, "", "", err
		}
		req.Host = "pair.example.com"
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Proto, string(body), err
	}
	framework.Eventually(t, convergeTimeout, "the host served", func() error {
		_, _, _, err := get("/")
		return err
	})
	status, proto, body, err := get("/?bytes=100000")
	if err != nil || status != http.StatusOK || proto != "HTTP/2.0" || len(body) != 100000 {
		t.Fatalf("a whole response over HTTP/2: %d %s, %d bytes, %v; want 200 over HTTP/2.0 with 100000", status, proto, len(body), err)
	}
	counts := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			status, _, _, err := get("/?wait=3s")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("a stream: %v", err)
				return
			}
			counts[status]++
		})
	}
	wg.Wait()
	if counts[200] != 2 || counts[503] != 3 || len(counts) != 2 {
		t.Errorf("five streams at once on one connection: %v, want exactly 2 served and 3 refused with 503", counts)
	}
}

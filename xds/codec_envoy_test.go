package xds

import (
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/protobuf/proto"
)

// TestEnvoyTakesSharedEncodings serves a route configuration large enough
// for the server's codec to send its encoding as it is, not copied into
// the response (codec.go), to a real Envoy over SotW and over delta, and
// changes it: Envoy must accept each version and route by it.
func TestEnvoyTakesSharedEncodings(t *testing.T) {
	toolPath(t, "envoy")
	for _, delta := range []bool{false, true} {
		protocol := map[bool]string{false: protocolSotW, true: protocolDelta}[delta]
		t.Run(protocol, func(t *testing.T) {
			ts := startServer(t)
			port := freePort(t)
			f := fixture{listenerPort: port, clusters: map[string][]string{"a": {backend(t, "a1")}}, padHosts: 2000}
			// Comfortably over the codec's threshold (32 KiB).
			if size := proto.Size(f.resources(t).Routes[0]); size < 64<<10 {
				t.Fatalf("the route configuration is %d bytes: too small to test sharing", size)
			}
			ts.publish(t, f)
			e := startEnvoy(t, ts.addr, "envoy-shared-"+protocol, delta, nil)
			expectBackend(t, port, "/a", "a1")
			expectStatus(t, port, "pad-1999.example.com", http.StatusNoContent)
			waitSynced(t, ts, e.nodeID)

			// A new version of the large configuration: more hosts.
			f.padHosts = 2500
			f.clusters["a"] = []string{backend(t, "a2")}
			ts.publish(t, f)
			expectBackend(t, port, "/a", "a2")
			expectStatus(t, port, "pad-2499.example.com", http.StatusNoContent)
			waitSynced(t, ts, e.nodeID)
			if got := e.stat("http.http.rds.http.update_rejected"); got != 0 {
				t.Errorf("Envoy rejected %d route configurations", got)
			}
			if got := e.stat("http.http.rds.http.update_success"); got < 2 {
				t.Errorf("Envoy took %d route configurations, want at least 2", got)
			}
		})
	}
}

// expectStatus waits until a request for host through Envoy is answered
// with status.
func expectStatus(t testing.TB, port int, host string, status int) {
	t.Helper()
	eventually(t, fmt.Sprintf("GET http://%s/ through envoy answers %d", host, status), func() error {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
		if err != nil {
			return err
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			return fmt.Errorf("got %d", resp.StatusCode)
		}
		return nil
	})
}

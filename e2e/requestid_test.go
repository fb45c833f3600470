package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestRequestID checks through a real Envoy that the upstream sees
// X-Request-ID as ingress-nginx sends it ($req_id in its template): the
// client's own, as sent, and a new one for a request without, different
// for each request. ingress-nginx's test/e2e/annotations/default_backend.go
// sends "x-request-id: something-unique" and expects the backend to see it.
func TestRequestID(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
spec:
  rules:
  - host: web.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`})
	envoy := fm.envoy
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	framework.Eventually(t, convergeTimeout, "web served", func() error {
		return envoy.Expect("web.example.com", "/", http.StatusOK, "alpha")
	})
	// seen sends GET / with the client's X-Request-ID (none when empty)
	// and returns the one the backend saw.
	seen := func(id string) string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
		req.Host = "web.example.com"
		if id != "" {
			req.Header.Set("X-Request-ID", id)
		}
		resp, err := (&http.Transport{Proxy: nil, DisableKeepAlives: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var reply echo.Reply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /: status %d, %v", resp.StatusCode, err)
		}
		if ids := reply.Header.Values("X-Request-Id"); len(ids) != 1 {
			t.Fatalf("the backend saw X-Request-ID %q, want one", ids)
		}
		return reply.Header.Get("X-Request-Id")
	}
	for _, id := range []string{"something-unique", "0b3c1f4e-2a71-4d6e-9c1e-6f0d7e9a8b21"} {
		if got := seen(id); got != id {
			t.Errorf("the client sent X-Request-ID %q, the backend saw %q", id, got)
		}
	}
	// nginx's $request_id is 32 hex digits, Envoy's a UUID: either is a
	// fresh random identifier, which is what a backend can rely on.
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	first, second := seen(""), seen("")
	if !uuid.MatchString(first) || !uuid.MatchString(second) || first == second {
		t.Errorf("requests without X-Request-ID: the backend saw %q and %q, want two different generated ones", first, second)
	}
}

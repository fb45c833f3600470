package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGatewayAPICORS sends through a real Envoy to HTTPRoutes with
// Gateway API's CORS filter, the cases of the conformance suite's
// HTTPRouteCORS (conformance/tests/httproute-cors.go of
// sigs.k8s.io/gateway-api) and the specification's rules it leaves out:
// an allowed origin echoed (exactly, by a wildcard of any depth, with the
// scheme's own port), one not allowed given no CORS header, with
// credentials every wildcard answered with what the request asked, a
// preflight of an origin not allowed answered without them, and an
// OPTIONS request that is no preflight served by the backend.
func TestGatewayAPICORS(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm := startFileMode(t, nil, manifest{"services.yaml", echoServicesYAML(alpha)})
	writeManifest(t, fm.dir, "gateway.yaml", fmt.Sprintf(gatewayCORSYAML, fm.cp.HTTPPort))
	envoy := fm.envoy
	t.Cleanup(func() {
		assertNoRejections(t, envoy, "listener_manager.lds", "cluster_manager.cds", "http.ingress_http.rds.ingress_http")
	})
	framework.Eventually(t, convergeTimeout, "the CORS routes served", func() error {
		return envoy.Expect("cors.example.com", "/cors-wildcard-methods-headers-unauth", http.StatusOK, "alpha")
	})
	const host = "cors.example.com"
	preflight := func(path, origin, method, headers string) corsAnswer {
		t.Helper()
		extra := map[string]string{"Access-Control-Request-Method": method}
		if headers != "" {
			extra["Access-Control-Request-Headers"] = headers
		}
		return corsRequest(t, envoy, http.MethodOptions, host, path, origin, extra)
	}
	listed := map[string]string{
		"Access-Control-Allow-Methods":     "GET, OPTIONS",
		"Access-Control-Allow-Headers":     "x-header-1, x-header-2",
		"Access-Control-Expose-Headers":    "x-header-3, x-header-4",
		"Access-Control-Max-Age":           "3600",
		"Access-Control-Allow-Credentials": "true",
	}
	for _, origin := range []string{"https://www.foo.com", "https://www.bar.com", "https://xpto.www.bar.com", "https://www.foo.com:443", "HTTPS://WWW.FOO.COM"} {
		want := map[string]string{"Access-Control-Allow-Origin": origin}
		for k, v := range listed {
			want[k] = v
		}
		preflight("/cors-1", origin, "GET", "x-header-1, x-header-2").expect(t, http.StatusNoContent, "", want)
		corsRequest(t, envoy, http.MethodGet, host, "/cors-1", origin, nil).
			expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": origin})
	}
	for _, origin := range []string{"https://foobar.com", "http://www.foo.com", "https://www.foo.com:8443", "https://bar.com"} {
		// Not allowed: the preflight answered without CORS headers,
		// never by the backend; other requests served without them.
		preflight("/cors-1", origin, "GET", "").expect(t, http.StatusNoContent, "", map[string]string{"Access-Control-Allow-Origin": "", "Access-Control-Allow-Methods": ""})
		corsRequest(t, envoy, http.MethodGet, host, "/cors-1", origin, nil).
			expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": ""})
	}
	// An OPTIONS request that names no method is no preflight.
	corsRequest(t, envoy, http.MethodOptions, host, "/cors-1", "https://www.foo.com", nil).
		expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "https://www.foo.com"})

	// Wildcards without credentials: sent as they are.
	preflight("/cors-2", "https://www.foo.com", "POST", "").expect(t, http.StatusNoContent, "", map[string]string{
		"Access-Control-Allow-Origin": "https://www.foo.com", "Access-Control-Allow-Methods": "*", "Access-Control-Allow-Credentials": "", "Access-Control-Max-Age": "5",
	})
	for _, origin := range []string{"https://foobar.com", "https://foobar.com:12345"} {
		preflight("/cors-wildcard-origin", origin, "PUT", "").expect(t, http.StatusNoContent, "", map[string]string{
			"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "PUT", "Access-Control-Allow-Credentials": "",
		})
		corsRequest(t, envoy, http.MethodPut, host, "/cors-wildcard-origin", origin, nil).
			expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Credentials": ""})
	}
	preflight("/cors-wildcard-methods-headers-unauth", "https://other.foo.com", "PUT", "x-header-1, x-header-2").expect(t, http.StatusNoContent, "", map[string]string{
		"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "*", "Access-Control-Allow-Headers": "*", "Access-Control-Allow-Credentials": "",
	})

	// With credentials, no "*": the request's own values, and none where
	// it asked none.
	preflight("/cors-wildcard-methods-headers", "https://other.foo.com", "PUT", "x-header-1, x-header-2").expect(t, http.StatusNoContent, "", map[string]string{
		"Access-Control-Allow-Origin": "https://other.foo.com", "Access-Control-Allow-Methods": "PUT",
		"Access-Control-Allow-Headers": "x-header-1, x-header-2", "Access-Control-Allow-Credentials": "true",
	})
	preflight("/cors-wildcard-methods-headers", "https://other.foo.com", "PUT", "").expect(t, http.StatusNoContent, "", map[string]string{
		"Access-Control-Allow-Origin": "https://other.foo.com", "Access-Control-Allow-Methods": "PUT", "Access-Control-Allow-Headers": "",
	})
	corsRequest(t, envoy, http.MethodGet, host, "/cors-wildcard-methods-headers", "https://other.foo.com", nil).
		expect(t, http.StatusOK, "alpha", map[string]string{"Access-Control-Allow-Origin": "https://other.foo.com", "Access-Control-Allow-Credentials": "true", "Access-Control-Allow-Methods": ""})
}

// gatewayCORSYAML is the suite's httproute-cors.yaml on one Route.
const gatewayCORSYAML = httpGatewayYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cors, namespace: default}
spec:
  parentRefs: [{name: web}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /cors-1}}]
    filters:
    - type: CORS
      cors:
        allowOrigins: ["https://www.foo.com", "https://*.bar.com"]
        allowMethods: [GET, OPTIONS]
        allowHeaders: [x-header-1, x-header-2]
        exposeHeaders: [x-header-3, x-header-4]
        allowCredentials: true
        maxAge: 3600
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-2}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["https://www.foo.com"], allowMethods: ["*"]}
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-origin}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["*"], allowMethods: [PUT], allowCredentials: false}
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: true}
    backendRefs: [{name: alpha, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /cors-wildcard-methods-headers-unauth}}]
    filters:
    - type: CORS
      cors: {allowOrigins: ["*"], allowMethods: ["*"], allowHeaders: ["*"], allowCredentials: false}
    backendRefs: [{name: alpha, port: 80}]
`

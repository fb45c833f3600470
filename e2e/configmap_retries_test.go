package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapRetryNonIdempotent checks the ConfigMap's
// retry-non-idempotent through a real Envoy, against a Service whose
// second endpoint takes each request whole and resets the connection
// (the request was sent). ingress-nginx's nginx.tmpl writes every
// location's proxy_next_upstream through buildNextUpstream
// (internal/ingress/controller/template/template.go), which adds
// non_idempotent when the key is true: nginx then passes a POST, LOCK or
// PATCH to the next server even once sent (ngx_http_upstream.c,
// ngx_http_upstream_next). "off" still passes nothing on. Set back to
// false, a POST once sent is not retried again (TestProxyAnnotations,
// "retries", proves the default).
func TestControllerConfigMapRetryNonIdempotent(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	resetting := resettingPort(t)
	never := strings.Replace(hostIngressYAML("never", "never.example.com", "resetting", ""), "namespace: default\n",
		"namespace: default\n  annotations: {nginx.ingress.kubernetes.io/proxy-next-upstream: \"off\"}\n", 1)
	fm, configure := startConfigMapMode(t, map[string]string{"retry-non-idempotent": "true"},
		manifest{"services.yaml", echoServicesYAML(alpha) + twoEndpointService("resetting", alpha.Port, resetting)},
		manifest{"ingresses.yaml", hostIngressYAML("sent", "sent.example.com", "resetting", "") + "---\n" + never})
	envoy := fm.envoy
	for _, host := range []string{"sent.example.com", "never.example.com"} {
		framework.Eventually(t, convergeTimeout, host+" served", func() error {
			return envoy.Expect(host, "/", http.StatusOK, "alpha")
		})
	}
	// Envoy takes the two endpoints in turn: n requests meet the
	// resetting one n/2 times unless they are retried.
	const n = 8
	failures := func(method, host string) int {
		failed := 0
		for range n {
			r := send(t, envoy, method, host, "/", strings.NewReader("x"))
			if r.err != nil || r.status != http.StatusOK || r.backend != "alpha" {
				failed++
			}
		}
		return failed
	}
	for _, method := range []string{http.MethodPost, http.MethodPatch, "LOCK", http.MethodGet} {
		if failed := failures(method, "sent.example.com"); failed != 0 {
			t.Errorf("retry-non-idempotent true, %s, one endpoint of two resetting once the request is sent: %d of %d failed, want all retried", method, failed, n)
		}
	}
	if failures(http.MethodPost, "never.example.com") == 0 {
		t.Errorf("retry-non-idempotent true, proxy-next-upstream off, POST: all %d served, want some meeting the resetting endpoint (off retries nothing)", n)
	}

	configure(map[string]string{"retry-non-idempotent": "false"})
	framework.Eventually(t, convergeTimeout, "a POST once sent no longer retried", func() error {
		if failures(http.MethodPost, "sent.example.com") == 0 {
			return fmt.Errorf("every POST served: still retried")
		}
		return nil
	})
	if failed := failures(http.MethodGet, "sent.example.com"); failed != 0 {
		t.Errorf("retry-non-idempotent false, GET: %d of %d failed, want all retried (ingress-nginx's default)", failed, n)
	}
}

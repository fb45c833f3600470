package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestGlobalExternalAuth checks the ConfigMap's global-auth-url through a
// real Envoy, the authorisation service beside it and a real auth service
// (the echo backend's /auth/, in a network namespace of its own, as in
// TestExternalAuth), as ingress-nginx's test/e2e/settings/global_external_auth.go
// does through nginx: every Ingress without an auth-url of its own is
// authenticated ("should return status code 401 when request any protected
// service"), and served with valid credentials; enable-global-auth "false"
// leaves an Ingress out ("... whitelisted (via ingress annotation) service
// and 401 when request protected service"); an Ingress's own auth-url
// wins (template.go shouldApplyGlobalAuth); and a path starting with
// no-auth-locations is left out, its other paths not ("... whitelisted
// (via no-auth-locations) service ...", template.go
// isLocationInLocationList).
func TestGlobalExternalAuth(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	netns := framework.NewNetns(t)
	authAddr := netns.IP + ":8080"
	framework.StartProcess(t, "auth-service", netns.Command(framework.EchoBinary(t), "-listen", authAddr+"=auth"))
	waitListening(t, authAddr)
	auth := "http://" + authAddr
	ingresses := strings.Join([]string{
		authIngress("plain", "plain.example.com", "/", nil),
		authIngress("optout", "optout.example.com", "/", map[string]string{"enable-global-auth": "false"}),
		authIngress("own", "own.example.com", "/", map[string]string{"auth-url": auth + "/auth/status/403"}),
		authIngress("acme", "acme.example.com", "/.well-known/acme-challenge", nil),
		authIngress("acme-app", "acme.example.com", "/app", nil),
	}, "---\n")
	fm, configure := startConfigMapMode(t, map[string]string{
		"global-auth-url": auth + "/auth/basic/user/password", "global-auth-response-headers": "X-Auth-Method"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", ingresses})
	envoy := fm.envoy
	expect := func(what, host, path, credentials string, status int) authReply {
		t.Helper()
		var r authReply
		framework.Eventually(t, convergeTimeout, what, func() error {
			r = authGet(envoy, http.MethodGet, host, path, credentials, nil)
			if r.err == nil && r.status != status {
				return fmt.Errorf("%s%s: %s, want %d", host, path, r, status)
			}
			return r.err
		})
		return r
	}
	expect("no credentials: 401", "plain.example.com", "/", "", http.StatusUnauthorized)
	r := expect("valid credentials: 200", "plain.example.com", "/", "user:password", http.StatusOK)
	if r.backend != "alpha" || r.reply.Header.Get("X-Auth-Method") != "GET" {
		t.Errorf("valid credentials: %s, X-Auth-Method %q; want alpha's answer with the auth service's header", r, r.reply.Header.Get("X-Auth-Method"))
	}
	expect("wrong credentials: 401", "plain.example.com", "/", "user:wrong", http.StatusUnauthorized)
	expect("enable-global-auth false: 200", "optout.example.com", "/", "", http.StatusOK)
	expect("own auth-url wins: 403", "own.example.com", "/", "user:password", http.StatusForbidden)
	expect("no-auth-locations: 200", "acme.example.com", "/.well-known/acme-challenge/token", "", http.StatusOK)
	expect("another path of the host: 401", "acme.example.com", "/app", "", http.StatusUnauthorized)

	// Without the key, nothing is authenticated.
	configure(nil)
	expect("global-auth-url removed: 200", "plain.example.com", "/", "", http.StatusOK)
}

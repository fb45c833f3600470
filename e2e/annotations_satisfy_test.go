package e2e

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestSatisfy checks satisfy through a real Envoy and the authorisation
// service beside it, from two client addresses: annotations/satisfy.go's
// "should allow multiple auth with satisfy any" (basic and external
// authentication, either lets the request in; neither: auth-signin's
// redirect), and satisfy any over a source range and basic
// authentication (an allowed address needs no password, another one the
// password; a denied address with the password passes too, as nginx's
// satisfy any lets any access check decide), against the default all.
func TestSatisfy(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	netns := framework.NewNetns(t)
	authAddr := netns.IP + ":8080"
	framework.StartProcess(t, "auth-service", netns.Command(framework.EchoBinary(t), "-listen", authAddr+"=auth"))
	waitListening(t, authAddr)
	far := framework.NewNetns(t).Client() // an address of no range
	near := framework.LoopbackClient()    // 127.0.0.1
	basic := map[string]string{"auth-type": "basic", "auth-secret": "basic-secret", "auth-realm": "test basic auth"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{basic, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	fm := startFileMode(t, nil,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"secrets.yaml", basicSecret("basic-secret", map[string]string{"auth": "uname:{PLAIN}pwd\n"})},
		manifest{"ingresses.yaml", strings.Join([]string{
			authIngress("auth", "auth.example.com", "/", with(map[string]string{
				"auth-url": "http://" + authAddr + "/auth/basic/user/password", "auth-signin": "http://$host/auth/start", "satisfy": "any"})),
			authIngress("any", "any.example.com", "/", with(map[string]string{"whitelist-source-range": "127.0.0.1", "satisfy": "any"})),
			authIngress("denied", "denied.example.com", "/", with(map[string]string{"denylist-source-range": "127.0.0.1", "satisfy": "any"})),
			authIngress("all", "all.example.com", "/", with(map[string]string{"whitelist-source-range": "127.0.0.1"})),
		}, "---\n")})
	envoy, port := fm.envoy, fm.cp.HTTPPort
	t.Cleanup(func() { assertNoRejections(t, envoy, "listener_manager.lds", "http.ingress_http.rds.ingress_http") })
	creds := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("uname:pwd"))}}
	framework.Eventually(t, convergeTimeout, "the hosts served", func() error {
		return expectClientHeader(near, port, "any.example.com", nil, http.StatusOK, "alpha")
	})

	t.Run("basic or external, with satisfy any", func(t *testing.T) {
		if r := authGet(envoy, http.MethodGet, "auth.example.com", "/", "uname:pwd", nil); r.status != http.StatusOK || r.backend != "alpha" {
			t.Errorf("with the basic credentials: %s, want 200 from alpha", r)
		}
		if r := authGet(envoy, http.MethodGet, "auth.example.com", "/", "user:password", nil); r.status != http.StatusOK || r.backend != "alpha" {
			t.Errorf("with the external service's credentials: %s, want 200 from alpha", r)
		}
		r := authGet(envoy, http.MethodGet, "auth.example.com", "/?a=b&c=d", "", nil)
		want := "http://auth.example.com/auth/start?rd=http://auth.example.com" + url.QueryEscape("/?a=b&c=d")
		if r.status != http.StatusFound || r.header.Get("Location") != want {
			t.Errorf("without credentials: %s, Location %q; want 302 to %q", r, r.header.Get("Location"), want)
		}
	})

	for _, c := range []struct {
		name    string
		client  *framework.Client
		host    string
		header  http.Header
		status  int
		backend string
	}{
		{"satisfy any: the allowed address needs no password", near, "any.example.com", nil, http.StatusOK, "alpha"},
		{"satisfy any: another address is asked for one", far, "any.example.com", nil, http.StatusUnauthorized, ""},
		{"satisfy any: another address with the password", far, "any.example.com", creds, http.StatusOK, "alpha"},
		{"satisfy any: a denied address is asked for the password", near, "denied.example.com", nil, http.StatusUnauthorized, ""},
		{"satisfy any: a denied address with the password", near, "denied.example.com", creds, http.StatusOK, "alpha"},
		{"satisfy all: the allowed address still needs the password", near, "all.example.com", nil, http.StatusUnauthorized, ""},
		{"satisfy all: the allowed address with it", near, "all.example.com", creds, http.StatusOK, "alpha"},
		{"satisfy all: another address is refused, password or not", far, "all.example.com", creds, http.StatusForbidden, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := expectClientHeader(c.client, port, c.host, c.header, c.status, c.backend); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("the backend never sees the credentials", func(t *testing.T) {
		r, err := far.Get(port, "any.example.com", "/", creds)
		if err != nil || r.Status != http.StatusOK || r.Echo.Header.Get("Authorization") != "" {
			t.Errorf("%v %v: want 200 without the Authorization header upstream", r, err)
		}
	})
}

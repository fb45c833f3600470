package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// TestControllerConfigMapUnderscoreHeaders checks the ConfigMap's
// enable-underscores-in-headers and ignore-invalid-headers through a real
// Envoy. nginx.tmpl writes them as underscores_in_headers and
// ignore_invalid_headers; with their defaults (off, on) nginx marks a
// header named with an underscore invalid (ngx_http_parse_header_line)
// and skips it (ngx_http_process_request_headers), so neither the
// location's rules nor the backend see it; ignore_invalid_headers off, or
// underscores_in_headers on, passes it on.
func TestControllerConfigMapUnderscoreHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	fm, configure := startConfigMapMode(t, map[string]string{"enable-underscores-in-headers": "false"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", hostIngressYAML("plain", "plain.example.com", "alpha", "")})
	envoy := fm.envoy
	// seen is what the backend got of X_Auth_User, and of X-Auth-User.
	seen := func() (underscored, dashed string, err error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+envoy.HTTPAddress+"/", nil)
		if err != nil {
			return "", "", err
		}
		req.Host = "plain.example.com"
		req.Header["X_Auth_User"] = []string{"admin"}
		req.Header.Set("X-Auth-User", "guest")
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return "", "", err
		}
		defer resp.Body.Close()
		var reply echo.Reply
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
			return "", "", fmt.Errorf("status %d, %v", resp.StatusCode, err)
		}
		var underscoredValues []string
		for name, vs := range reply.Header {
			if strings.EqualFold(name, "X_Auth_User") {
				underscoredValues = append(underscoredValues, vs...)
			}
		}
		return strings.Join(underscoredValues, ","), reply.Header.Get("X-Auth-User"), nil
	}
	expect := func(what, underscored string) {
		t.Helper()
		framework.Eventually(t, convergeTimeout, what, func() error {
			u, d, err := seen()
			if err == nil && (u != underscored || d != "guest") {
				err = fmt.Errorf("the backend saw X_Auth_User %q and X-Auth-User %q; want %q and \"guest\"", u, d, underscored)
			}
			return err
		})
	}
	expect("false: dropped", "")
	configure(map[string]string{"enable-underscores-in-headers": "true"})
	expect("true: passed on", "admin")
	configure(map[string]string{"enable-underscores-in-headers": "false", "ignore-invalid-headers": "false"})
	expect("ignore-invalid-headers false: passed on", "admin")
	configure(map[string]string{"enable-underscores-in-headers": "false", "ignore-invalid-headers": "true"})
	expect("both defaults again: dropped", "")
}

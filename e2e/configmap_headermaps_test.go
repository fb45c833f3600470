package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/echo"
	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// headerMapsIngressesYAML are two Ingresses: plain, and one whose
// configuration-snippet sets a response header add-headers sets too.
const headerMapsIngressesYAML = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: plain, namespace: default}
spec:
  rules:
  - host: custom-header
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: snippet
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: |
      more_set_headers "X-First: from the location";
spec:
  rules:
  - host: snippet-header
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}
`

// headersConfigMapYAML is a ConfigMap default/name of headers.
func headersConfigMapYAML(name string, data map[string]string) string {
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]string{"name": name, "namespace": "default"}, "data": data})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// headerExchange sends GET path to host with header, and returns the
// status, the response's header and, where a backend answered, what it
// received.
func headerExchange(address, host, path string, header map[string]string) (int, http.Header, echo.Reply, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+address+path, nil)
	if err != nil {
		return 0, nil, echo.Reply{}, err
	}
	req.Host = host
	for k, v := range header {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, nil, echo.Reply{}, err
	}
	defer resp.Body.Close()
	var reply echo.Reply
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil {
			return 0, nil, echo.Reply{}, fmt.Errorf("not an echo backend's reply: %w", err)
		}
	}
	return resp.StatusCode, resp.Header, reply, nil
}

// TestControllerConfigMapAddHeaders: the ConfigMap's add-headers names a
// ConfigMap whose entries every response carries, as ingress-nginx's
// test/e2e/settings/custom_header.go ("Add a custom header", "Add
// multiple custom headers") checks; nginx.tmpl writes each as a
// more_set_headers at the http level, so a location's own (a snippet's)
// wins, and the backend's value is replaced. The named ConfigMap is
// watched: a change to it, or to the key, is served.
func TestControllerConfigMapAddHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	data := map[string]string{"add-headers": "default/add-headers-configmap",
		"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"}
	fm, configure := startConfigMapMode(t, data,
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", headerMapsIngressesYAML},
		manifest{"headers.yaml", headersConfigMapYAML("add-headers-configmap", map[string]string{
			"X-A-Custom-Header": "customHeaderValue", "X-First": "Prepare for trouble!", "X-Second": "And make it double!",
			"X-Host": "$host"})})
	expect := func(host, path string, want map[string]string) func() error {
		return func() error {
			status, h, _, err := headerExchange(fm.envoy.HTTPAddress, host, path, nil)
			if err != nil {
				return err
			}
			for k, v := range want {
				if got := h.Values(k); v == "" && len(got) != 0 || v != "" && !slices.Equal(got, []string{v}) {
					return fmt.Errorf("%s%s (status %d): %s %q, want %q", host, path, status, k, got, v)
				}
			}
			return nil
		}
	}
	t.Run("every response carries the ConfigMap's headers", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "the headers", expect("custom-header", "/", map[string]string{
			"X-A-Custom-Header": "customHeaderValue", "X-First": "Prepare for trouble!", "X-Second": "And make it double!",
			"X-Host": "custom-header"}))
		// more_set_headers replaces the backend's own value.
		framework.Eventually(t, convergeTimeout, "the backend's replaced", expect("custom-header", "/?header=X-Second:backend", map[string]string{
			"X-Second": "And make it double!"}))
	})
	// The difference docs/configmap.md states: nginx's default server
	// would send them with its 404.
	t.Run("Envoy's 404 to a host no Ingress has carries none", func(t *testing.T) {
		status, h, _, err := headerExchange(fm.envoy.HTTPAddress, "unknown.example", "/", nil)
		if err != nil || status != http.StatusNotFound || h.Get("X-A-Custom-Header") != "" {
			t.Errorf("status %d, X-A-Custom-Header %q (%v), want 404 without", status, h.Get("X-A-Custom-Header"), err)
		}
	})
	t.Run("a location's own header wins", func(t *testing.T) {
		framework.Eventually(t, convergeTimeout, "the snippet's X-First", expect("snippet-header", "/", map[string]string{
			"X-First": "from the location", "X-A-Custom-Header": "customHeaderValue"}))
	})
	t.Run("a change to the named ConfigMap is served", func(t *testing.T) {
		writeManifest(t, fm.dir, "headers.yaml", headersConfigMapYAML("add-headers-configmap", map[string]string{"X-A-Custom-Header": "changed"}))
		framework.Eventually(t, convergeTimeout, "the new headers", expect("custom-header", "/", map[string]string{
			"X-A-Custom-Header": "changed", "X-First": "", "X-Second": ""}))
	})
	t.Run("without the key, no header", func(t *testing.T) {
		configure(map[string]string{"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"})
		framework.Eventually(t, convergeTimeout, "no header", expect("custom-header", "/", map[string]string{"X-A-Custom-Header": ""}))
	})
}

// TestControllerConfigMapProxySetHeaders: the ConfigMap's
// proxy-set-headers names a ConfigMap whose entries the backend of every
// location receives, as ingress-nginx's
// docs/examples/customization/custom-headers shows; nginx.tmpl writes
// each as a proxy_set_header after its own, so the client's header of
// that name is replaced, an empty value removes it, variables are read,
// and a header the template sets itself (X-Forwarded-Host) is sent a
// second time (nginx 1.27.1 sends every entry of the list).
func TestControllerConfigMapProxySetHeaders(t *testing.T) {
	alpha := echoBackends(t, "alpha")[0]
	// The snippet Ingress's location is made through its annotations,
	// the other's is the policy of every Ingress without any.
	fm, configure := startConfigMapMode(t, map[string]string{"proxy-set-headers": "default/custom-headers",
		"allow-snippet-annotations": "true", "annotations-risk-level": "Critical"},
		manifest{"services.yaml", echoServicesYAML(alpha)},
		manifest{"ingresses.yaml", headerMapsIngressesYAML},
		manifest{"headers.yaml", headersConfigMapYAML("custom-headers", map[string]string{
			"X-Using-Nginx-Controller": "true", "X-Client": "client=$remote_addr", "X-Empty": "",
			"X-Forwarded-Host": "second.example"})})
	client := map[string]string{"X-Using-Nginx-Controller": "forged", "X-Empty": "from the client", "X-Client": "forged"}
	for _, host := range []string{"custom-header", "snippet-header"} {
		framework.Eventually(t, convergeTimeout, host+": the backend's headers", func() error {
			_, _, r, err := headerExchange(fm.envoy.HTTPAddress, host, "/", client)
			switch {
			case err != nil:
				return err
			case r.Backend != "alpha":
				return fmt.Errorf("answered by %q", r.Backend)
			case !slices.Equal(r.Header.Values("X-Using-Nginx-Controller"), []string{"true"}):
				return fmt.Errorf("X-Using-Nginx-Controller %q, want [true]", r.Header.Values("X-Using-Nginx-Controller"))
			case !slices.Equal(r.Header.Values("X-Client"), []string{"client=127.0.0.1"}):
				return fmt.Errorf("X-Client %q, want [client=127.0.0.1]", r.Header.Values("X-Client"))
			case len(r.Header.Values("X-Empty")) != 0:
				return fmt.Errorf("X-Empty %q, want none", r.Header.Values("X-Empty"))
			case !slices.Equal(listValues(r.Header, "X-Forwarded-Host"), []string{host, "second.example"}):
				return fmt.Errorf("X-Forwarded-Host %q, want the template's then the ConfigMap's", r.Header.Values("X-Forwarded-Host"))
			}
			return nil
		})
	}
	t.Run("a change to the named ConfigMap is served", func(t *testing.T) {
		writeManifest(t, fm.dir, "headers.yaml", headersConfigMapYAML("custom-headers", map[string]string{"X-Using-Nginx-Controller": "changed"}))
		framework.Eventually(t, convergeTimeout, "the new headers", func() error {
			_, _, r, err := headerExchange(fm.envoy.HTTPAddress, "snippet-header", "/", client)
			switch {
			case err != nil:
				return err
			case !slices.Equal(r.Header.Values("X-Using-Nginx-Controller"), []string{"changed"}):
				return fmt.Errorf("X-Using-Nginx-Controller %q, want [changed]", r.Header.Values("X-Using-Nginx-Controller"))
			case !slices.Equal(r.Header.Values("X-Empty"), []string{"from the client"}):
				return fmt.Errorf("X-Empty %q, want the client's", r.Header.Values("X-Empty"))
			}
			return nil
		})
	})
	t.Run("a header not translated leaves the ConfigMap unapplied", func(t *testing.T) {
		writeManifest(t, fm.dir, "headers.yaml", headersConfigMapYAML("custom-headers", map[string]string{
			"X-Using-Nginx-Controller": "true", "X-Geo": "$geoip_country_code"}))
		framework.Eventually(t, convergeTimeout, "the client's header", func() error {
			_, _, r, err := headerExchange(fm.envoy.HTTPAddress, "custom-header", "/", client)
			if err == nil && !slices.Equal(r.Header.Values("X-Using-Nginx-Controller"), []string{"forged"}) {
				err = fmt.Errorf("X-Using-Nginx-Controller %q, want the client's", r.Header.Values("X-Using-Nginx-Controller"))
			}
			return err
		})
	})
	configure(nil)
}

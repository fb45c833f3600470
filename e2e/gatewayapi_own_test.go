package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"testing"

	"github.com/ingress-xds/ingress-xds/e2e/framework"
)

// gatewayOwnYAML holds two Gateways listening on port 80 without a
// hostname, as HTTPRouteMultipleGateways' (conformance/tests/
// httproute-multiple-gateways.yaml of sigs.k8s.io/gateway-api v1.6.3), and
// one listening for foo.com on 80 and 8080, as
// HTTPRouteListenerPortMatching's (httproute-listener-port-matching.yaml).
const gatewayOwnYAML = gatewayClassYAML + `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: one, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: two, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ports, namespace: default}
spec:
  gatewayClassName: ingress-xds
  listeners:
  - {name: foo-80, port: 80, protocol: HTTP, hostname: foo.com}
  - {name: foo-8080, port: 8080, protocol: HTTP, hostname: foo.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: one, namespace: default}
spec:
  parentRefs: [{name: one}]
  rules: [{backendRefs: [{name: v1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: two, namespace: default}
spec:
  parentRefs: [{name: two}]
  rules: [{backendRefs: [{name: v2, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shared, namespace: default}
spec:
  parentRefs: [{name: one}, {name: two}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /shared}}]
    backendRefs: [{name: v3, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: port-80, namespace: default}
spec:
  parentRefs: [{name: ports, port: 80}]
  rules: [{backendRefs: [{name: v1, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: port-8080, namespace: default}
spec:
  parentRefs: [{name: ports, port: 8080}]
  rules: [{backendRefs: [{name: v2, port: 80}]}]
`

// With --gateway-own-addresses each Gateway's listener port is an Envoy
// listener of its own: two Gateways on port 80 each serve their own Route
// (and the Route attached to both), a Gateway's port serves the Routes
// attached through it alone, and a Host's port reaches the backend as the
// client sent it, hosts matching without it.
func TestGatewayAPIOwnAddresses(t *testing.T) {
	fm := startFileModeWith(t, []string{"--gateway-own-addresses"},
		manifest{"services.yaml", echoServicesYAML(echoBackends(t, "v1", "v2", "v3")...)},
		manifest{"gateways.yaml", gatewayOwnYAML})
	var ports map[string]string
	framework.Eventually(t, convergeTimeout, "the own listeners", func() error {
		var err error
		ports, err = ownListeners(fm.envoy)
		if err == nil && len(ports) < 4 {
			err = fmt.Errorf("listeners %v", ports)
		}
		return err
	})
	for _, tc := range []struct {
		listener, host, path string
		backend, sawHost     string
	}{
		{"gateway_default_one_80", "a.example", "/", "v1", "a.example"},
		{"gateway_default_one_80", "a.example", "/shared", "v3", "a.example"},
		{"gateway_default_two_80", "a.example", "/", "v2", "a.example"},
		{"gateway_default_two_80", "a.example", "/shared", "v3", "a.example"},
		{"gateway_default_ports_80", "foo.com", "/", "v1", "foo.com"},
		{"gateway_default_ports_8080", "foo.com:8080", "/", "v2", "foo.com:8080"},
	} {
		address := ports[tc.listener]
		framework.Eventually(t, convergeTimeout, fmt.Sprintf("%s %s%s", tc.listener, tc.host, tc.path), func() error {
			r, err := framework.Get(address, tc.host, tc.path)
			if err != nil {
				return err
			}
			if r.Status != 200 || r.Backend != tc.backend || r.Echo.Host != tc.sawHost {
				return fmt.Errorf("%d from %q, Host %q: want 200 from %s, Host %q", r.Status, r.Backend, r.Echo.Host, tc.backend, tc.sawHost)
			}
			return nil
		})
	}
	// A host the port's listener does not name is not another port's.
	if r, err := framework.Get(ports["gateway_default_ports_80"], "bar.com", "/"); err != nil || r.Status != 404 {
		t.Errorf("bar.com on ports' port 80: %v, %v: want 404", r, err)
	}
}

// ownListeners are Envoy's own listeners (of --gateway-own-addresses) and
// the addresses they listen on, by name.
func ownListeners(e *framework.Envoy) (map[string]string, error) {
	status, body, err := e.Admin("/listeners?format=json")
	if err != nil || status != 200 {
		return nil, fmt.Errorf("/listeners: %d, %v", status, err)
	}
	var out struct {
		ListenerStatuses []struct {
			Name         string `json:"name"`
			LocalAddress struct {
				SocketAddress struct {
					Address   string `json:"address"`
					PortValue int    `json:"port_value"`
				} `json:"socket_address"`
			} `json:"local_address"`
		} `json:"listener_statuses"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		return nil, err
	}
	ports := map[string]string{}
	for _, l := range out.ListenerStatuses {
		if len(l.Name) > 8 && l.Name[:8] == "gateway_" {
			ports[l.Name] = net.JoinHostPort("127.0.0.1", strconv.Itoa(l.LocalAddress.SocketAddress.PortValue))
		}
	}
	return ports, nil
}

package translate_test

import (
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"

	"google.golang.org/protobuf/proto"

	"github.com/ingress-xds/ingress-xds/translate"
)

// connectionBadValues are the controller ConfigMap's keys of connections
// (configmap/connections.go) with values that do not parse, or that Envoy
// cannot take as written.
const connectionBadValues = `keep-alive: "soon", keep-alive-requests: "-1", ssl-protocols: "SSLv3", ssl-ciphers: "ALL:!aNULL", ` +
	`use-http2: "maybe", upstream-keepalive-time: "forever", upstream-keepalive-timeout: "0", upstream-keepalive-requests: "lots", ` +
	`upstream-keepalive-connections: "many", proxy-real-ip-cidr: "10.0.0.0/33", enable-real-ip: "yes", ` +
	`forwarded-for-header: "X Client", compute-full-forwarded-for: "1x", log-format-upstream: "$pid $status", ` +
	`log-format-escape-json: "true", limit-conn-status-code: "200", use-proxy-protocol: "on"`

// connectionKeysUnset checks that the host is served as without those keys:
// the plain listener's connection manager keeps Envoy's keep-alive and
// client address, no cluster is given pool options, and there is no access
// log (its format, with a variable without an Envoy form, is refused as a
// whole).
func connectionKeysUnset(host string) func(*testing.T, *translate.Result) {
	return func(t *testing.T, res *translate.Result) {
		t.Helper()
		plainRoute(host)(t, res)
		for _, l := range res.Resources.Listeners {
			for _, f := range l.GetListenerFilters() {
				if f.GetName() == "envoy.filters.listener.proxy_protocol" {
					t.Errorf("listener %s reads the PROXY protocol", l.GetName())
				}
			}
			for _, fc := range l.GetFilterChains() {
				for _, f := range fc.GetFilters() {
					hcm := &hcmv3.HttpConnectionManager{}
					if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
						t.Fatalf("listener %s: %v", l.GetName(), err)
					}
					if hcm.GetCommonHttpProtocolOptions() != nil || len(hcm.GetOriginalIpDetectionExtensions()) > 0 || !hcm.GetUseRemoteAddress().GetValue() {
						t.Errorf("listener %s: keep-alive or client address set: %v", l.GetName(), hcm)
					}
					if logs := hcm.GetAccessLog(); len(logs) != 0 {
						t.Errorf("listener %s: %d access logs, want none (log-format-upstream refused)", l.GetName(), len(logs))
					}
				}
			}
		}
		for _, c := range res.Resources.Clusters {
			raw, err := proto.Marshal(c)
			if err != nil {
				t.Fatalf("cluster %s: %v", c.GetName(), err)
			}
			cl := &clusterv3.Cluster{}
			if err := proto.Unmarshal(raw, cl); err != nil {
				t.Fatalf("cluster %s: %v", c.GetName(), err)
			}
			if len(cl.GetTypedExtensionProtocolOptions()) > 0 {
				t.Errorf("cluster %s: pool options %v", c.GetName(), cl.GetTypedExtensionProtocolOptions())
			}
		}
	}
}

package configmap

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// nginxHidden are the headers nginx's proxy module hides of every
// backend's response (ngx_http_proxy_module.c, ngx_http_proxy_hide_headers,
// but Date and Server).
const nginxHidden = "x-pad,x-accel-expires,x-accel-redirect,x-accel-limit-rate,x-accel-buffering,x-accel-charset"

func TestConnections(t *testing.T) {
	tab := New(annotations.New(""))
	for _, tc := range []struct {
		name        string
		data        map[string]string
		http, https ir.Downstream
		hops        uint32
		upstream    *ir.Upstream
		issues      []string
		// trusted: use-forwarded-headers, so the client's X-Forwarded-*
		// are kept (lua_ingress.lua); else they are the request's.
		trusted bool
	}{
		{name: "nothing set: the client's address told as by ingress-nginx",
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}},
		{name: "keep-alive", data: map[string]string{"keep-alive": "30", "keep-alive-requests": "5"},
			http:  ir.Downstream{IdleTimeout: 30, MaxRequests: 5, Forwarded: ir.ForwardedClient},
			https: ir.Downstream{IdleTimeout: 30, MaxRequests: 5, Forwarded: ir.ForwardedClient}},
		{name: "keep-alive 0 is none", data: map[string]string{"keep-alive": "0", "keep-alive-requests": "5"},
			http:  ir.Downstream{MaxRequests: 1, Forwarded: ir.ForwardedClient},
			https: ir.Downstream{MaxRequests: 1, Forwarded: ir.ForwardedClient}},
		{name: "TLS on HTTPS only", data: map[string]string{"ssl-protocols": "TLSv1.3 TLSv1.2", "ssl-ciphers": "ECDHE-ECDSA-AES256-GCM-SHA384:AES128-SHA", "use-http2": "false"},
			http:  ir.Downstream{Forwarded: ir.ForwardedClient},
			https: ir.Downstream{TLSMin: ir.TLS12, TLSMax: ir.TLS13, TLSCiphers: "ECDHE-ECDSA-AES256-GCM-SHA384:AES128-SHA", NoHTTP2: true, Forwarded: ir.ForwardedClient}},
		{name: "ingress-nginx's default ciphers lose their DHE suites", data: map[string]string{"ssl-ciphers": "ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256"},
			http:   ir.Downstream{Forwarded: ir.ForwardedClient},
			https:  ir.Downstream{TLSCiphers: "ECDHE-RSA-AES128-GCM-SHA256", Forwarded: ir.ForwardedClient},
			issues: []string{"ssl-ciphers:InvalidConfigMapValue"}},
		{name: "an OpenSSL expression is Envoy's ciphers", data: map[string]string{"ssl-ciphers": "HIGH:!aNULL", "ssl-protocols": "SSLv3"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient},
			issues: []string{"ssl-ciphers:InvalidConfigMapValue", "ssl-protocols:InvalidConfigMapValue"}},
		{name: "enable-real-ip trusts one proxy", data: map[string]string{"enable-real-ip": "true"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}, hops: 1},
		{name: "proxy-real-ip-cidr without real IP changes nothing", data: map[string]string{"proxy-real-ip-cidr": "10.0.0.0/8"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}},
		{name: "trusted CIDRs", data: map[string]string{"use-forwarded-headers": "true", "proxy-real-ip-cidr": "10.1.2.3/8, 192.0.2.1", "compute-full-forwarded-for": "true"},
			http:  ir.Downstream{TrustedCIDRs: "10.0.0.0/8,192.0.2.1/32", Forwarded: ir.ForwardedFull},
			https: ir.Downstream{TrustedCIDRs: "10.0.0.0/8,192.0.2.1/32", Forwarded: ir.ForwardedFull}, trusted: true},
		{name: "compute-full-forwarded-for needs use-forwarded-headers", data: map[string]string{"enable-real-ip": "true", "compute-full-forwarded-for": "true"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}, hops: 1},
		{name: "a header of its own", data: map[string]string{"use-forwarded-headers": "true", "forwarded-for-header": "CF-Connecting-IP"},
			http:  ir.Downstream{ClientHeader: "CF-Connecting-IP", Forwarded: ir.ForwardedClient},
			https: ir.Downstream{ClientHeader: "CF-Connecting-IP", Forwarded: ir.ForwardedClient}, trusted: true},
		{name: "a header of its own cannot be checked against CIDRs", data: map[string]string{"use-forwarded-headers": "true", "forwarded-for-header": "CF-Connecting-IP", "proxy-real-ip-cidr": "10.0.0.0/8"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}, hops: 1,
			issues: []string{"forwarded-for-header:InvalidConfigMapValue"}, trusted: true},
		{name: "upstream keep-alive", data: map[string]string{"upstream-keepalive-timeout": "20", "upstream-keepalive-requests": "7", "upstream-keepalive-time": "1h30m", "upstream-keepalive-connections": "64"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient},
			upstream: &ir.Upstream{IdleTimeout: 20, MaxRequests: 7, MaxLifetime: 5400}},
		{name: "no upstream keep-alive", data: map[string]string{"upstream-keepalive-connections": "0", "upstream-keepalive-requests": "7"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient},
			upstream: &ir.Upstream{MaxRequests: 1}},
		{name: "the access log", data: map[string]string{"log-format-upstream": `$remote_addr "$http_user_agent" 5% $namespace ${status}x`},
			http:  ir.Downstream{Forwarded: ir.ForwardedClient, AccessLog: &ir.AccessLog{Format: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% \"%REQ(user-agent)%\" 5%% %METADATA(ROUTE:ingress-xds:namespace)% %RESPONSE_CODE%x\n"}},
			https: ir.Downstream{Forwarded: ir.ForwardedClient, AccessLog: &ir.AccessLog{Format: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% \"%REQ(user-agent)%\" 5%% %METADATA(ROUTE:ingress-xds:namespace)% %RESPONSE_CODE%x\n"}}},
		{name: "hide-headers beside nginx's own", data: map[string]string{"hide-headers": "X-Powered-By, X-Accel-Redirect"},
			http:  ir.Downstream{Forwarded: ir.ForwardedClient, HideHeaders: nginxHidden + ",x-powered-by"},
			https: ir.Downstream{Forwarded: ir.ForwardedClient, HideHeaders: nginxHidden + ",x-powered-by"}},
		{name: "the access log turned off", data: map[string]string{"log-format-upstream": "$status", "disable-access-log": "true"},
			http: ir.Downstream{Forwarded: ir.ForwardedClient}, https: ir.Downstream{Forwarded: ir.ForwardedClient}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			proxyHeaders := ir.ProxyHeadersSet
			if tc.trusted {
				proxyHeaders = ir.ProxyHeadersTrusted
			}
			wantHTTP, wantHTTPS := tc.http, tc.https
			for _, w := range []*ir.Downstream{&wantHTTP, &wantHTTPS} {
				if w.HideHeaders == "" {
					w.HideHeaders = nginxHidden
				}
			}
			wantHTTP.ProxyHeaders, wantHTTP.ForwardedPort = proxyHeaders, 80
			wantHTTPS.ProxyHeaders, wantHTTPS.ForwardedPort = proxyHeaders, 443
			if got := *s.Downstream(ir.HTTP, false); !sameDownstream(got, wantHTTP) {
				t.Errorf("HTTP listener:\n got %+v (%+v)\nwant %+v (%+v)", got, got.AccessLog, wantHTTP, wantHTTP.AccessLog)
			}
			if got := *s.Downstream(ir.HTTPS, false); !sameDownstream(got, wantHTTPS) {
				t.Errorf("HTTPS listener:\n got %+v (%+v)\nwant %+v (%+v)", got, got.AccessLog, wantHTTPS, wantHTTPS.AccessLog)
			}
			if s.TrustedHops != tc.hops {
				t.Errorf("trusted hops %d, want %d", s.TrustedHops, tc.hops)
			}
			if (s.Upstream == nil) != (tc.upstream == nil) || s.Upstream != nil && *s.Upstream != *tc.upstream {
				t.Errorf("upstream %+v, want %+v", s.Upstream, tc.upstream)
			}
			if got := reasons(s); !slices.Equal(got, tc.issues) {
				t.Errorf("issues %v (%v), want %v", got, s.Issues, tc.issues)
			}
			// The same values each time: listeners compare by them.
			if s.Downstream(ir.HTTPS, true) != s.Downstream(ir.HTTPS, true) {
				t.Errorf("a new value each call")
			}
			if d := s.Downstream(ir.HTTP, true); d.ClientHeader != "" || d.TrustedCIDRs != "" {
				t.Errorf("--trusted-forwarded-hops does not win: %+v", d)
			}
			// Proxies trusted by the flag set the X-Forwarded-* headers.
			if d := s.Downstream(ir.HTTPS, true); d.ProxyHeaders != ir.ProxyHeadersTrusted || d.ForwardedPort != 443 {
				t.Errorf("--trusted-forwarded-hops: %+v, want the client's X-Forwarded-* trusted and port 443", d)
			}
		})
	}
}

// sameDownstream compares two listeners' settings by value, their access
// logs and session ticket keys too.
func sameDownstream(a, b ir.Downstream) bool { return reflect.DeepEqual(a, b) }

func TestNginxDuration(t *testing.T) {
	for in, want := range map[string]uint32{"90": 90, "75s": 75, "1h": 3600, "1h30m": 5400, "2d": 172800} {
		if got, err := nginxDuration(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "h", "1y", "1.5h", "-1s"} {
		if got, err := nginxDuration(in); err == nil {
			t.Errorf("%q: %d, want an error", in, got)
		}
	}
}

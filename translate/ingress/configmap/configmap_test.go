package configmap

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

func TestConfigMapDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "configmap.md")
	if _, err := os.Stat(path); err != nil && !golden.Updating() {
		t.Fatalf("%v: run `make golden`", err)
	}
	golden.Check(t, path, New(annotations.New("")).Markdown())
}

// Every key has a verdict, and those that are annotations' defaults have
// the annotation's, or "not honoured yet" where the annotation is not
// applied.
func TestEveryKeyHasATruthfulVerdict(t *testing.T) {
	reg := annotations.New("")
	tab := New(reg)
	if n := len(tab.Keys()); n < 200 {
		t.Errorf("the table has %d keys; ingress-nginx's ConfigMap has more than 200", n)
	}
	for _, k := range tab.Keys() {
		v := k.verdictOrDefault()
		if v == "" || (v != annotations.Honoured && k.Note == "") && v != annotations.NotYet {
			t.Errorf("%s: verdict %q without a note", k.Name, v)
		}
		if k.Annotation == "" {
			continue
		}
		av, ok := reg.DefinedVerdict(k.Annotation)
		if !ok || av != v || av == annotations.Refused || av == annotations.NotYet {
			t.Errorf("%s: the default of %s (%q, defined %v) has verdict %q", k.Name, k.Annotation, av, ok, v)
		}
	}
	for _, name := range []string{"proxy-body-size", "proxy-connect-timeout", "proxy-read-timeout", "proxy-send-timeout",
		"proxy-next-upstream", "proxy-next-upstream-tries", "ssl-redirect", "force-ssl-redirect", "custom-http-errors",
		"load-balance", "whitelist-source-range", "denylist-source-range"} {
		if v, _ := tab.Verdict(name); v != annotations.Honoured && v != annotations.HonouredWithDifference {
			t.Errorf("%s: %q, want it honoured as its annotation's default", name, v)
		}
	}
	if v, _ := tab.Verdict("no-such-key"); v != annotations.Unknown {
		t.Errorf("an unknown key: %q", v)
	}
}

func reasons(s *Settings) []string {
	var out []string
	for _, is := range s.Issues {
		out = append(out, is.Key+":"+is.Reason)
	}
	return out
}

func TestParse(t *testing.T) {
	reg := annotations.New("")
	tab := New(reg)
	for _, tc := range []struct {
		name     string
		data     map[string]string
		defaults int
		issues   []string
	}{
		{"empty", nil, 0, nil},
		{"annotation defaults", map[string]string{"proxy-body-size": "8k", "ssl-redirect": "false", "whitelist-source-range": "10.0.0.0/8, 192.168.0.0/16"}, 3, nil},
		{"ignored keys say nothing", map[string]string{"worker-processes": "4", "server-tokens": "true"}, 0, nil},
		{"a bad value is treated as unset", map[string]string{"proxy-body-size": "lots", "proxy-read-timeout": "30"}, 1, []string{"proxy-body-size:InvalidConfigMapValue"}},
		{"a bad range fails closed", map[string]string{"whitelist-source-range": "10.0.0.0/33"}, 1, []string{"whitelist-source-range:InvalidConfigMapValue"}},
		{"not honoured yet, unknown", map[string]string{"enable-ocsp": "true", "proxy-bdy-size": "1m"}, 0, []string{"enable-ocsp:UnsupportedConfigMapKey", "proxy-bdy-size:UnknownConfigMapKey"}},
		{"hsts", map[string]string{"hsts": "true", "hsts-max-age": "600", "hsts-preload": "true"}, 0, nil},
		{"use-forwarded-headers", map[string]string{"use-forwarded-headers": "true"}, 0, nil},
		{"use-forwarded-headers that does not parse", map[string]string{"use-forwarded-headers": "yes please"}, 0, []string{"use-forwarded-headers:InvalidConfigMapValue"}},
		{"hsts off", map[string]string{"hsts": "false", "hsts-max-age": "600"}, 0, nil},
		{"hsts values that do not parse", map[string]string{"hsts": "true", "hsts-max-age": "-1", "hsts-include-subdomains": "sometimes"}, 0, []string{"hsts-include-subdomains:InvalidConfigMapValue", "hsts-max-age:InvalidConfigMapValue"}},
		{"a risk level that is none", map[string]string{"annotations-risk-level": "Extreme", "allow-snippet-annotations": "true"}, 0, []string{"annotations-risk-level:InvalidConfigMapValue"}},
		{"a risk level in any case", map[string]string{"annotations-risk-level": "medium"}, 0, nil},
		{"rate limits by the client's address alone", map[string]string{"limit-conn-zone-variable": "$http_x_api_key"}, 0, []string{"limit-conn-zone-variable:InvalidConfigMapValue"}},
		{"rate limits by the client's address, as text", map[string]string{"limit-conn-zone-variable": "$remote_addr", "disable-ipv6": "true"}, 0, nil},
		{"disable-ipv6 that does not parse", map[string]string{"disable-ipv6": "maybe"}, 0, []string{"disable-ipv6:InvalidConfigMapValue"}},
		{"proxy-protocol-header-timeout that is not a Go duration", map[string]string{"use-proxy-protocol": "true", "proxy-protocol-header-timeout": "5"}, 0, []string{"proxy-protocol-header-timeout:InvalidConfigMapValue"}},
		{"an access control not applied refuses", map[string]string{"global-auth-snippet": "auth_request off;", "block-referers": "", "enable-modsecurity": "false"}, 1, []string{"global-auth-snippet:ConfigMapRefused"}},
		{"block-user-agents", map[string]string{"block-user-agents": "AlphaBot, ~*bot", "block-referers": ""}, 0, nil},
		{"block-user-agents that RE2 cannot take refuse", map[string]string{"block-user-agents": "AlphaBot, ~(?<=x)bot"}, 1, []string{"block-user-agents:InvalidConfigMapValue"}},
		{"block-cidrs", map[string]string{"block-cidrs": "192.0.2.0/24, 198.51.100.7"}, 0, nil},
		{"block-cidrs that do not parse refuse", map[string]string{"block-cidrs": "192.0.2.0/24, nonsense"}, 1, []string{"block-cidrs:InvalidConfigMapValue"}},
		{"codes", map[string]string{"http-redirect-code": "301", "limit-req-status-code": "429", "limit-conn-status-code": "429"}, 0, nil},
		{"codes out of range", map[string]string{"http-redirect-code": "303", "limit-req-status-code": "200", "limit-conn-status-code": "600"}, 0, []string{"http-redirect-code:InvalidConfigMapValue", "limit-conn-status-code:InvalidConfigMapValue", "limit-req-status-code:InvalidConfigMapValue"}},
		{"a switch that does not parse refuses", map[string]string{"enable-modsecurity": "maybe"}, 1, []string{"enable-modsecurity:ConfigMapRefused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			if s.Compression != nil {
				t.Errorf("compression %+v without use-gzip", s.Compression)
			}
			if got := s.Defaults.Len(); got != tc.defaults {
				t.Errorf("%d defaults, want %d", got, tc.defaults)
			}
			if got := reasons(s); !slices.Equal(got, tc.issues) {
				t.Errorf("issues %v, want %v", got, tc.issues)
			}
			if tc.name == "block-cidrs" && !slices.Equal(s.BlockCIDRs, []string{"192.0.2.0/24", "198.51.100.7/32"}) && !slices.Equal(s.BlockCIDRs, []string{"192.0.2.0/24", "198.51.100.7"}) {
				t.Errorf("block-cidrs %v", s.BlockCIDRs)
			}
			if want := map[string]string{"hsts": "max-age=600; includeSubDomains; preload", "hsts values that do not parse": "max-age=31536000; includeSubDomains"}[tc.name]; s.HSTS != want {
				t.Errorf("HSTS %q, want %q", s.HSTS, want)
			}
			if want := map[string]uint32{"use-forwarded-headers": 1}[tc.name]; s.TrustedHops != want {
				t.Errorf("trusted hops %d, want %d", s.TrustedHops, want)
			}
			if tc.name == "codes" && (s.HTTPRedirectCode != 301 || s.LimitReqStatus != 429 || s.LimitConnStatus != 429) {
				t.Errorf("codes %d %d %d", s.HTTPRedirectCode, s.LimitReqStatus, s.LimitConnStatus)
			}
			if tc.name == "codes out of range" && s.LimitConnStatus != 0 {
				t.Errorf("limit-conn-status-code 600 kept: %d", s.LimitConnStatus)
			}
		})
	}
}

// TestParseGzip: use-gzip with ingress-nginx's defaults (config.go: level
// 1, min length 256, its gzip-types) as nginx.tmpl writes them, the keys
// overriding them, and nothing without use-gzip (the template writes the
// keys inside {{ if $cfg.UseGzip }}).
func TestParseGzip(t *testing.T) {
	tab := New(annotations.New(""))
	nginxTypes := strings.Fields(nginxGzipTypes + " text/html")
	slices.Sort(nginxTypes)
	for _, tc := range []struct {
		name   string
		data   map[string]string
		want   *ir.Compression
		issues []string
	}{
		{"off by default", map[string]string{"gzip-level": "5"}, nil, nil},
		{"defaults", map[string]string{"use-gzip": "true"}, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: nginxTypes}, nil},
		{"set", map[string]string{"use-gzip": "true", "gzip-level": "6", "gzip-min-length": "0", "gzip-types": "Application/JSON text/plain"},
			&ir.Compression{Level: 6, MinLength: 0, ContentTypes: []string{"application/json", "text/html", "text/plain"}}, nil},
		{"every type", map[string]string{"use-gzip": "true", "gzip-types": "text/css *"}, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: []string{"*"}}, nil},
		{"bad values are unset", map[string]string{"use-gzip": "true", "gzip-level": "10", "gzip-min-length": "-1", "gzip-types": "text/css;q=1"},
			&ir.Compression{Level: 1, MinLength: 256, ContentTypes: nginxTypes}, []string{"gzip-level:InvalidConfigMapValue", "gzip-min-length:InvalidConfigMapValue", "gzip-types:InvalidConfigMapValue"}},
		{"use-gzip that does not parse", map[string]string{"use-gzip": "yes"}, nil, []string{"use-gzip:InvalidConfigMapValue"}},
		{"gzip-disable msie6", map[string]string{"use-gzip": "true", "gzip-disable": "msie6"}, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: nginxTypes, SkipMSIE6: true}, nil},
		{"gzip-disable, one expression", map[string]string{"use-gzip": "true", "gzip-disable": " Googlebot|MSIE [1-6]\\. "}, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: nginxTypes, SkipUserAgent: `Googlebot|MSIE [1-6]\.`}, nil},
		{"gzip-disable RE2 cannot take", map[string]string{"use-gzip": "true", "gzip-disable": "(?<!x)bot"}, &ir.Compression{Level: 1, MinLength: 256, ContentTypes: nginxTypes}, []string{"gzip-disable:InvalidConfigMapValue"}},
		{"gzip-disable without use-gzip", map[string]string{"gzip-disable": "msie6"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			if !reflect.DeepEqual(s.Compression, tc.want) {
				t.Errorf("compression %+v, want %+v", s.Compression, tc.want)
			}
			if got := reasons(s); !slices.Equal(got, tc.issues) {
				t.Errorf("issues %v, want %v", got, tc.issues)
			}
		})
	}
}

// The defaults apply where an Ingress does not set the annotation, and its
// own value wins; an access control whose default does not parse refuses
// the Ingresses that do not set it.
func TestDefaultsUnderAnnotations(t *testing.T) {
	reg := annotations.New("")
	tab := New(reg)
	s := tab.Parse(map[string]string{"proxy-body-size": "8k", "denylist-source-range": "not-a-range"})
	v, issues := reg.ParseWith(nil, s.Defaults)
	if size, ok := annotations.ProxyBodySize.Get(v); !ok || size != 8<<10 {
		t.Errorf("the default body size: %v %v", size, ok)
	}
	if len(issues) != 1 || issues[0].Refusal == "" || !strings.Contains(issues[0].Message, "denylist-source-range") {
		t.Errorf("a denylist that does not parse does not refuse: %+v", issues)
	}
	v, issues = reg.ParseWith(map[string]string{annotations.NginxPrefix + "/proxy-body-size": "1m", annotations.NginxPrefix + "/denylist-source-range": "192.0.2.0/24"}, s.Defaults)
	if size, _ := annotations.ProxyBodySize.Get(v); size != 1<<20 {
		t.Errorf("the annotation does not override the default: %v", size)
	}
	if len(issues) != 0 {
		t.Errorf("an Ingress with its own denylist: %+v", issues)
	}
	// A value of the Ingress's that does not parse falls back to the
	// default, as in ingress-nginx.
	v, _ = reg.ParseWith(map[string]string{annotations.NginxPrefix + "/proxy-body-size": "lots"}, s.Defaults)
	if size, _ := annotations.ProxyBodySize.Get(v); size != 8<<10 {
		t.Errorf("an invalid annotation does not fall back to the default: %v", size)
	}
}

// TestNginxDefaultsComeFromTheTable: serve --nginx-defaults gives the
// table's defaults, written once (each key's NginxDefault), and each parses
// without an issue, so that it is applied as an Ingress would see it.
func TestNginxDefaultsComeFromTheTable(t *testing.T) {
	want := map[string]string{
		"proxy-body-size": "1m", "proxy-connect-timeout": "5", "proxy-read-timeout": "60", "proxy-send-timeout": "60",
		"ssl-redirect": "true", "hsts": "true", "log-format-upstream": DefaultLogFormat, "enable-underscores-in-headers": "false",
		"client-header-timeout": "60", "http2-max-concurrent-streams": "128", "ssl-session-tickets": "false", "ssl-session-timeout": "10m",
	}
	got := NginxDefaults()
	if !maps.Equal(got, want) {
		t.Errorf("NginxDefaults() = %v, want %v", got, want)
	}
	for _, k := range table() {
		if !k.served {
			continue
		}
		if k.nginxValue == "" && `"`+got[k.Name]+`"` != k.NginxDefault && got[k.Name] != k.NginxDefault {
			t.Errorf("%s: served %q, documented %s", k.Name, got[k.Name], k.NginxDefault)
		}
		if k.verdictOrDefault() == annotations.NotYet || k.verdictOrDefault() == annotations.Ignored {
			t.Errorf("%s: served by --nginx-defaults, but its verdict is %q", k.Name, k.verdictOrDefault())
		}
	}
	if s := New(annotations.New("")).Parse(got); len(s.Issues) > 0 {
		t.Errorf("NginxDefaults() parse with issues: %v", s.Issues)
	}
}

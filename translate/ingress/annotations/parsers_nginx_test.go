package annotations

import (
	"slices"
	"testing"
	"time"
)

// The proxy keys read their values as ingress-nginx's parsers and template
// do: what ingress-nginx would not apply is an InvalidAnnotation here.
func TestProxyValues(t *testing.T) {
	r := New("")
	get := func(key, value string) (*Values, []string) {
		v, issues := r.Parse(map[string]string{NginxPrefix + "/" + key: value})
		return v, reasons(issues)
	}
	for _, tc := range []struct {
		value string
		want  time.Duration // 0: refused
	}{{"60", time.Minute}, {"1", time.Second}, {"10x", 0}, {"10s", 0}, {"50k", 0}, {"0", 0}, {"-1", 0}, {" 5", 0}, {"99999999999999", 0}, {"1000000000", 1e9 * time.Second}, {"1000000001", 0}} {
		v, issues := get("proxy-read-timeout", tc.value)
		got, ok := ProxyReadTimeout.Get(v)
		if ok != (tc.want != 0) || got != tc.want || (tc.want == 0) != slices.Equal(issues, []string{"InvalidAnnotation"}) {
			t.Errorf("proxy-read-timeout %q: %v (set %v), issues %v; want %v", tc.value, got, ok, issues, tc.want)
		}
	}
	for _, tc := range []struct {
		value string
		want  int64 // -1: refused
	}{{"8m", 8 << 20}, {"1M", 1 << 20}, {"8k", 8 << 10}, {"1g", 1 << 30}, {"0", 0}, {"1000", 1000}, {" 2k ", 2048},
		{"1q", -1}, {"15r", -1}, {"1b", -1}, {"1.5m", -1}, {"-1", -1}, {"", -1}, {"99999999999999999g", -1}} {
		v, issues := get("proxy-body-size", tc.value)
		got, ok := ProxyBodySize.Get(v)
		if ok != (tc.want >= 0) || (ok && got != tc.want) || (tc.want < 0) != slices.Equal(issues, []string{"InvalidAnnotation"}) {
			t.Errorf("proxy-body-size %q: %v (set %v), issues %v; want %v", tc.value, got, ok, issues, tc.want)
		}
	}
	for value, want := range map[string][]string{
		"error timeout http_502": {"error", "timeout", "http_502"},
		"off":                    {"off"},
		"error error":            {"error"},
		"error bogus":            nil,
		"ERROR":                  nil,
		"":                       nil,
	} {
		v, _ := get("proxy-next-upstream", value)
		if got, _ := ProxyNextUpstream.Get(v); !slices.Equal(got, want) {
			t.Errorf("proxy-next-upstream %q: %v, want %v", value, got, want)
		}
	}
	for value, want := range map[string]int{"3": 3, "0": 0, "888888": 888888, "-1": -1, "x": -1} {
		v, _ := get("proxy-next-upstream-tries", value)
		got, ok := ProxyNextUpstreamTries.Get(v)
		if ok != (want >= 0) || (ok && got != want) {
			t.Errorf("proxy-next-upstream-tries %q: %v (set %v), want %v", value, got, ok, want)
		}
	}
	// The keys Envoy has no use for are known: ignored, not unsupported.
	for _, key := range []string{"proxy-buffering", "proxy-buffer-size", "proxy-buffers-number", "proxy-busy-buffers-size",
		"proxy-max-temp-file-size", "client-body-buffer-size", "proxy-next-upstream-timeout"} {
		if _, issues := get(key, "1"); len(issues) != 0 && key != "proxy-buffering" {
			t.Errorf("%s: issues %v", key, issues)
		}
	}
	if _, issues := get("client-body-buffer-size", "1b"); !slices.Equal(issues, []string{"InvalidAnnotation"}) {
		t.Errorf("client-body-buffer-size 1b: issues %v", issues)
	}
}

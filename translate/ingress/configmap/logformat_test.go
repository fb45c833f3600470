package configmap

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's default log format translates without a Warning, as
// serve --nginx-defaults applies it, every variable of it an Envoy
// operator: none is left as text, and its route variables ask the
// front-end for the routes' names.
func TestDefaultLogFormat(t *testing.T) {
	s := New(annotations.New("")).Parse(NginxDefaults())
	if len(s.Issues) > 0 {
		t.Errorf("ingress-nginx's defaults are reported: %v", s.Issues)
	}
	f, missing := parseLogFormat(DefaultLogFormat)
	if len(missing) > 0 {
		t.Errorf("without an Envoy form: %v", missing)
	}
	a := s.Downstream(ir.HTTP, false).AccessLog
	if a == nil || a.Format != f.text() || a.JSON != "" || a.Path != "" || a.UnknownHosts {
		t.Fatalf("access log %+v, want the default format, to standard output, unknown hosts left out", a)
	}
	for _, want := range []string{
		"%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% - %DYNAMIC_METADATA(envoy.filters.http.ext_authz:remote_user)% [%START_TIME(%d/%b/%Y:%H:%M:%S %z)%]",
		`"%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %BYTES_SENT%`,
		"[%CEL(('ingress-xds' in xds.route_metadata.filter_metadata && 'upstream' in xds.route_metadata.filter_metadata['ingress-xds']) ? " +
			"xds.route_metadata.filter_metadata['ingress-xds'].upstream : xds.cluster_name.split('/')[0] + '-' + xds.cluster_name.split('/')[1] + '-' + xds.cluster_name.split('/')[2])%] [%CEL('ingress-xds' in xds.route_metadata.filter_metadata && 'canary_cluster' in ",
		"%REQ(X-REQUEST-ID)%\n",
	} {
		if !strings.Contains(a.Format, want) {
			t.Errorf("format %q lacks %q", a.Format, want)
		}
	}
	if want := (LogNames{Upstream: true, Canary: true}); s.LogNames != want {
		t.Errorf("route names %+v, want %+v: the default format reads $proxy_upstream_name and $proxy_alternative_upstream_name", s.LogNames, want)
	}
}

// A variable without an Envoy form refuses the whole value (nginx would
// print it; a "-" or its name as text would misalign every parser): the
// key is reported and treated as unset (no access log; under
// --nginx-defaults, ingress-nginx's default format), and the ConfigMap's
// other keys apply.
func TestLogFormatRefused(t *testing.T) {
	tab := New(annotations.New(""))
	data := map[string]string{"log-format-upstream": "$remote_addr $pid $status $pid $upstream_cache_status", "keep-alive": "30"}
	def, _ := parseLogFormat(DefaultLogFormat)
	for _, tc := range []struct {
		name    string
		s       *Settings
		want    *ir.AccessLog
		instead string
	}{
		{"alone", tab.Parse(data), nil, "no access log"},
		{"over ingress-nginx's defaults", tab.ParseOver(NginxDefaults(), data), &ir.AccessLog{Format: def.text()}, "default format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasons(tc.s); !slices.Equal(got, []string{"log-format-upstream:InvalidConfigMapValue"}) {
				t.Fatalf("issues %v", tc.s.Issues)
			}
			if msg := tc.s.Issues[0].Message; !strings.Contains(msg, "$pid, $upstream_cache_status") || !strings.Contains(msg, tc.instead) {
				t.Errorf("message %q does not name each variable once and say %q", msg, tc.instead)
			}
			d := tc.s.Downstream(ir.HTTP, false)
			if (d.AccessLog == nil) != (tc.want == nil) || d.AccessLog != nil && !reflect.DeepEqual(*d.AccessLog, *tc.want) {
				t.Errorf("access log %+v, want %+v", d.AccessLog, tc.want)
			}
			if d.IdleTimeout != 30 {
				t.Errorf("keep-alive not applied beside the refused format")
			}
		})
	}
}

// The keys around the access log: its path, the URIs skipped, the
// unknown hosts, escape=json.
func TestAccessLogKeys(t *testing.T) {
	tab := New(annotations.New(""))
	for _, tc := range []struct {
		name   string
		data   map[string]string
		want   *ir.AccessLog
		issues []string
	}{
		{name: "stderr, skipped URIs, unknown hosts", data: map[string]string{
			"log-format-upstream": "$status", "access-log-path": "/dev/stderr",
			"skip-access-log-urls": "/healthz, ~*^/metrics,/ready?x=1", "enable-access-log-for-default-backend": "true"},
			want: &ir.AccessLog{Format: "%RESPONSE_CODE%\n", Path: "/dev/stderr", Skip: []string{"/healthz", "/ready?x=1"}, SkipRegex: []string{"(?i)^/metrics"}, UnknownHosts: true}},
		{name: "ingress-nginx's default path is standard output; http-access-log-path wins", data: map[string]string{
			"log-format-upstream": "$status", "access-log-path": "/var/log/nginx/access.log", "http-access-log-path": "/dev/stderr"},
			want: &ir.AccessLog{Format: "%RESPONSE_CODE%\n", Path: "/dev/stderr"}},
		{name: "a file is refused", data: map[string]string{"log-format-upstream": "$status", "access-log-path": "/var/log/envoy.log"},
			want: &ir.AccessLog{Format: "%RESPONSE_CODE%\n"}, issues: []string{"access-log-path:InvalidConfigMapValue"}},
		{name: "a regular expression RE2 refuses is left out", data: map[string]string{"log-format-upstream": "$status", "skip-access-log-urls": "/a,~(?<=x)"},
			want: &ir.AccessLog{Format: "%RESPONSE_CODE%\n", Skip: []string{"/a"}}, issues: []string{"skip-access-log-urls:InvalidConfigMapValue"}},
		{name: "escape=json", data: map[string]string{"log-format-escape-json": "true",
			"log-format-upstream": `{"time": "$time_iso8601", "status": $status, "agent": "UA $http_user_agent 100%", "n": 1, "in": {"uri": "$request_uri"}}`},
			want: &ir.AccessLog{JSON: `{"agent":"UA %REQ(user-agent)% 100%%","in":{"uri":"%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%"},"n":1,"status":"%RESPONSE_CODE%","time":"%START_TIME(%Y-%m-%dT%H:%M:%S%z)%"}`}},
		{name: "escape=none wins over escape=json", data: map[string]string{"log-format-escape-json": "true", "log-format-escape-none": "true", "log-format-upstream": `{"s": $status}`},
			want: &ir.AccessLog{Format: "{\"s\": %RESPONSE_CODE%}\n"}},
		{name: "escape=json of a format that is no JSON object", data: map[string]string{"log-format-escape-json": "true", "log-format-upstream": `$remote_addr $status`},
			want: &ir.AccessLog{Format: "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% %RESPONSE_CODE%\n"}, issues: []string{"log-format-escape-json:InvalidConfigMapValue"}},
		{name: "no log-format-upstream: no access log", data: map[string]string{"skip-access-log-urls": "/healthz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tab.Parse(tc.data)
			got := s.Downstream(ir.HTTP, false).AccessLog
			if (got == nil) != (tc.want == nil) || got != nil && !reflect.DeepEqual(*got, *tc.want) {
				t.Errorf("access log\n got %+v\nwant %+v", got, tc.want)
			}
			if got != nil && got.JSON != "" && !json.Valid([]byte(got.JSON)) {
				t.Errorf("JSON format %q is not JSON", got.JSON)
			}
			if r := reasons(s); !slices.Equal(r, tc.issues) {
				t.Errorf("issues %v (%v), want %v", r, s.Issues, tc.issues)
			}
		})
	}
}

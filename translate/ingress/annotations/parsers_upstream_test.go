package annotations

import (
	"reflect"
	"testing"
)

// TestParseHashBy: nginx variables become the parts Envoy hashes, in
// their order, each once; anything Envoy cannot hash is refused.
func TestParseHashBy(t *testing.T) {
	for in, want := range map[string][]HashPart{
		"$request_uri":               {{Kind: HashPath}},
		"$host$request_uri":          {{Kind: HashHost}, {Kind: HashPath}},
		"${remote_addr}":             {{Kind: HashSourceIP}},
		"$http_x_user_id":            {{Kind: HashHeader, Name: "x-user-id"}},
		"$http_host":                 {{Kind: HashHost}},
		"$cookie_session$arg_id":     {{Kind: HashCookie, Name: "session"}, {Kind: HashQuery, Name: "id"}},
		"$uri$request_uri":           {{Kind: HashPath}},
		" $binary_remote_addr ":      {{Kind: HashSourceIP}},
		"$http_X_Foo${cookie_Bar}":   {{Kind: HashHeader, Name: "x-foo"}, {Kind: HashCookie, Name: "Bar"}},
		"$remote_addr$remote_addr":   {{Kind: HashSourceIP}},
		"$arg_page$http_x_a$http_xa": {{Kind: HashQuery, Name: "page"}, {Kind: HashHeader, Name: "x-a"}, {Kind: HashHeader, Name: "xa"}},
	} {
		got, err := parseHashBy(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseHashBy(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "$request_id", "user-$host", "$host-x", "$", "${host", "$http_", "$cookie_", "host"} {
		if got, err := parseHashBy(in); err == nil {
			t.Errorf("parseHashBy(%q) = %v, want an error", in, got)
		}
	}
}

// TestParseUpstreamValues: the other upstream keys take what ingress-nginx's
// validators take (backend-protocol in any case, load-balance exactly) and
// what Envoy can say (ciphers by BoringSSL name, TLS 1.2 and 1.3).
func TestParseUpstreamValues(t *testing.T) {
	for _, tc := range []struct {
		parse func(string) (any, error)
		in    string
		want  any // nil: an error
	}{
		{boxed(parseBackendProtocol), " grpcs ", "GRPCS"},
		{boxed(parseBackendProtocol), "Auto_HTTP", "AUTO_HTTP"},
		{boxed(parseBackendProtocol), "h2c", "H2C"},
		{boxed(parseBackendProtocol), "SPDY", nil},
		{boxed(parseLoadBalance), "ewma", "ewma"},
		{boxed(parseLoadBalance), "EWMA", nil},
		{boxed(parseLoadBalance), "least_conn", nil},
		{boxed(parseNamespacedName), "shop/ca", "shop/ca"},
		{boxed(parseNamespacedName), "ca", nil},
		{boxed(parseNamespacedName), "shop/ca/x", nil},
		{boxed(parseNamespacedName), "/ca", nil},
		{boxed(parseServerName), "Backend.Internal", "backend.internal"},
		{boxed(parseServerName), "backend.internal:443", nil},
		{boxed(parseServerName), "a b", nil},
		{boxed(parseTLSProtocols), "TLSv1.3 TLSv1.2 TLSv1.3", []string{"TLSv1.2", "TLSv1.3"}},
		{boxed(parseTLSProtocols), "TLSv1.1", nil},
		{boxed(parseTLSProtocols), " ", nil},
		{boxed(parseCiphers), "DEFAULT", []string(nil)},
		{boxed(parseCiphers), "ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA", []string{"ECDHE-RSA-AES128-GCM-SHA256", "AES256-SHA"}},
		{boxed(parseCiphers), "HIGH:!aNULL", nil},
		{boxed(parseCiphers), "ECDHE-RSA-AES128-GCM-SHA256:", nil},
	} {
		got, err := tc.parse(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%q parsed as %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
}

package snippet

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/golden"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// TestGolden translates each testdata/<case>.<context>.conf (context:
// location for a configuration-snippet, server for a server-snippet, auth
// for an auth-snippet, its headers shown as the request's; http for the
// ConfigMap's http-snippet, its verdicts alone) and
// compares the result, or the refusal, with testdata/<case>.json. The
// semantics each case shows are nginx's, as docs/snippets.md cites them;
// the e2e suite proves them through Envoy.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.conf"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, input := range inputs {
		base := strings.TrimSuffix(filepath.Base(input), ".conf")
		name, context, _ := strings.Cut(base, ".")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			// A location case may name its location's options:
			// location-grpcs-proxysslsecret.
			context, optNames, _ := strings.Cut(context, "-")
			var opts Options
			for _, o := range strings.Split(optNames, "-") {
				switch o {
				case "":
				case "proxysslsecret":
					opts.ProxySSLSecret = true
				default:
					opts.Backend = strings.ToUpper(o)
				}
			}
			ctx := LocationContext
			if context == "server" {
				ctx = ServerContext
			}
			res, err := Translate(ctx, string(src), opts)
			if context == "http" {
				h, httpErr := TranslateHTTP(string(src))
				res, err = &Result{Verdicts: h.Verdicts}, httpErr
				if httpErr == nil {
					got, err := json.MarshalIndent(h, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					golden.Check(t, filepath.Join("testdata", name+".json"), append(got, '\n'))
					return
				}
			}
			if context == "auth" {
				headers, verdicts, authErr := TranslateAuth(string(src))
				res, err = &Result{Edits: Edits{Request: ir.HeaderChanges{Set: headers}}, Verdicts: verdicts}, authErr
			}
			var out any = res
			var r *Refusal
			if errors.As(err, &r) {
				out = map[string]any{"refused": r.Error(), "verdicts": res.Verdicts}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(name, "refused") != (r != nil) {
				t.Errorf("refused: %v, want a refusal only for the refused-* cases", err)
			}
			got, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".json"), append(got, '\n'))
		})
	}
}

// TestProxyAddForwardedForClientHeader: where forwarded-for-header names
// another header than X-Forwarded-For, the listeners copy that one into
// X-Original-Forwarded-For, so the client's X-Forwarded-For is not there
// for $proxy_add_x_forwarded_for to read: refused, where the default
// header translates it.
func TestProxyAddForwardedForClientHeader(t *testing.T) {
	const src = "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"
	if _, err := Translate(LocationContext, src, Options{}); err != nil {
		t.Fatalf("with X-Forwarded-For: %v", err)
	}
	_, err := Translate(LocationContext, src, Options{ClientHeader: "CF-Connecting-IP"})
	var r *Refusal
	if !errors.As(err, &r) || r.Directive != "proxy_set_header" || !strings.Contains(r.Why, "forwarded-for-header CF-Connecting-IP") {
		t.Errorf("with forwarded-for-header CF-Connecting-IP: %v, want proxy_set_header refused for it", err)
	}
}

// TestProxyCacheZoneDeclared: a proxy_cache of a zone the ConfigMap's
// http-snippet declares is refused as caching, not translated; of a zone
// nobody declares, as nginx refuses the configuration
// (ngx_http_proxy_merge_loc_conf: "proxy_cache" zone "..." is unknown).
func TestProxyCacheZoneDeclared(t *testing.T) {
	const src = "proxy_cache my_cache;"
	for _, tc := range []struct {
		zones map[string]bool
		want  string
	}{
		{nil, `zone "my_cache" is unknown`},
		{map[string]bool{"other": true}, `zone "my_cache" is unknown`},
		{map[string]bool{"my_cache": true}, "caching: not translated"},
	} {
		_, err := Translate(LocationContext, src, Options{CacheZones: tc.zones})
		var r *Refusal
		if !errors.As(err, &r) || r.Directive != "proxy_cache" || !strings.Contains(r.Why, tc.want) {
			t.Errorf("cache zones %v: %v, want proxy_cache refused for %q", tc.zones, err, tc.want)
		}
	}
}

// TestLimitReqZoneKnownToNginx: a limit_req of a zone no http-snippet
// declares is refused as nginx refuses it (ngx_http_limit_req_module: an
// unknown zone fails the configuration), one of a zone declared with a key
// other than the client's address as not translated: nginx runs it.
func TestLimitReqZoneKnownToNginx(t *testing.T) {
	h, err := TranslateHTTP("limit_req_zone $http_x_api_key zone=bykey:10m rate=10r/s;\nlimit_req_zone $binary_remote_addr zone=perip:10m rate=10r/s;")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Zones: h.Zones}
	for zone, want := range map[string]string{
		"bykey":   `zone "bykey" is not a limit_req_zone of $binary_remote_addr with a rate: not translated`,
		"missing": `zone "missing": no limit_req_zone of the ConfigMap's http-snippet declares it: nginx refuses it`,
		"perip":   "",
	} {
		_, err := Translate(LocationContext, "limit_req zone="+zone+" burst=5 nodelay;", opts)
		var r *Refusal
		switch {
		case want == "" && err != nil:
			t.Errorf("zone %s: %v, want it translated", zone, err)
		case want != "" && (!errors.As(err, &r) || r.Why != want):
			t.Errorf("zone %s: %v, want the refusal %q", zone, err, want)
		}
	}
}

// TestLimitReqInAnsweringLocation: in a server-snippet's location that
// answers every request with return, limit_req never runs (the rewrite
// phase answers first, ngx_http_rewrite_module), whatever its zone's key,
// so it is of no effect there; a zone nginx does not know still refuses
// the snippet, as nginx refuses the configuration.
func TestLimitReqInAnsweringLocation(t *testing.T) {
	h, err := TranslateHTTP("limit_req_zone $http_x_api_key zone=bykey:10m rate=10r/s;")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Zones: h.Zones}
	if _, err := Translate(ServerContext, "location = /up { limit_req zone=bykey; return 200; }", opts); err != nil {
		t.Errorf("a zone of another key in an answering location: %v, want it of no effect", err)
	}
	_, err = Translate(ServerContext, "location = /up { limit_req zone=missing; return 200; }", opts)
	var r *Refusal
	if !errors.As(err, &r) || !r.nginxRefuses() {
		t.Errorf("an unknown zone in an answering location: %v, want nginx's refusal", err)
	}
}

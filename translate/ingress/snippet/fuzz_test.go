package snippet

import (
	"testing"
	"time"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// FuzzTranslate: whatever the text, Translate returns a result or a
// refusal, never panics, and every route a result's branches would make
// passes the IR's validation (no header value with CR or LF, no regular
// expression RE2 refuses, no redirect Envoy would refuse). Its seeds run
// in every go test.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		`more_set_headers "X-A: $host";`,
		`if ($http_x ~* "^a(b|c)$") { return 301 https://$host$request_uri; }`,
		`set $a 1; if ($a = 1) { return 403; }`,
		`rewrite ^/(.*)$ /x/$1 break;`,
		"location = /a { return 200 \"ok\"; }\nlocation ~ \\.php$ { deny all; }",
		`add_header X $upstream_http_x always; proxy_set_header Y "";`,
		`allow 10.0.0.0/8; deny all;`,
		`rewrite ^/(\w+)/(\d+)$ /items/$2/$1 break;`,
		`location ~ ^/a/(.*) { return 302 /b/$1$is_args$args; }`,
		`if ($http_x ~* "^a(b|c)$") { return 301 https://$host/x$request_uri; }`,
		`expires 1y; add_header Cache-Control public; error_page 403 = /login;`,
		`limit_req zone=api burst=5 nodelay; limit_req_status 429;`,
		`grpc_set_header X-A $service_name.$namespace; proxy_ssl_name $host; proxy_pass_header ETag;`,
		`if ($namespace = "default") { return 418; }`,
		"sub_filter '<HEAD>' '<head>\\n<base href=\"/a/\">'; sub_filter_once off; sub_filter_types Text/CSS *; sub_filter_last_modified on;",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, server bool) {
		ctx := LocationContext
		if server {
			ctx = ServerContext
		}
		// The options of a gRPC location whose template variables and
		// http-snippet zones are known, so that the directives reading
		// them are exercised too.
		opts := Options{Backend: "GRPC", Vars: map[string]string{"namespace": "default", "service_name": "echo"},
			Zones: map[string]Zone{"api": {Name: "api", Requests: 10, Period: time.Second}}}
		if server {
			opts = Options{}
		}
		res, err := Translate(ctx, src, opts)
		if err != nil {
			if _, ok := err.(*Refusal); !ok {
				t.Fatalf("%q: an error that is not a refusal: %v", src, err)
			}
			return
		}
		check := func(r *Result) {
			// The route that forwards, with the block's edits and rates.
			base := &ir.RoutePolicy{RequestHeaders: &r.Edits.Request, ResponseHeaders: &r.Edits.Response, IPRules: r.Access}
			if r.Body != nil {
				base.ResponseRewrite = &ir.ResponseRewrite{Body: r.Body}
			}
			if len(r.RequestRates) > 0 {
				base.RateLimit = &ir.RateLimit{Rates: r.RequestRates, Status: 503}
			}
			doc := &ir.IR{VirtualHosts: []*ir.VirtualHost{{Host: "a.example", Routes: []*ir.Route{{
				Match: ir.Match{PathType: ir.PathPrefix, Path: "/"}, Source: &ir.Object{Kind: "Ingress", Name: "a"},
				Action: ir.Action{Direct: &ir.DirectResponse{Status: 200}}, Policy: base,
			}}}}}
			if err := doc.Validate(); err != nil {
				t.Fatalf("%q: the block's policy is invalid IR: %v", src, err)
			}
			for _, b := range r.Branches {
				route := &ir.Route{Match: ir.Match{PathType: ir.PathPrefix, Path: "/", Headers: b.When}, Source: &ir.Object{Kind: "Ingress", Name: "a"}}
				switch {
				case b.Outcome.Redirect != nil:
					route.Action.Redirect = b.Outcome.Redirect
				case b.Outcome.Direct != nil:
					route.Action.Direct = b.Outcome.Direct
				default:
					route.Action.Direct = &ir.DirectResponse{Status: 200}
				}
				p := &ir.RoutePolicy{RequestHeaders: &r.Edits.Request, ResponseHeaders: &r.Edits.Response, IPRules: r.Access}
				if b.Outcome.Rewrite != nil {
					p.Rewrite = &ir.Rewrite{Regex: b.Outcome.Rewrite}
				}
				if e := b.Outcome.Edits; e != nil {
					p.RequestHeaders, p.ResponseHeaders = &e.Request, &e.Response
				}
				route.Policy = p
				doc := &ir.IR{VirtualHosts: []*ir.VirtualHost{{Host: "a.example", Routes: []*ir.Route{route}}}}
				if err := doc.Validate(); err != nil {
					t.Fatalf("%q: a branch makes invalid IR: %v", src, err)
				}
			}
		}
		check(res)
		for _, l := range res.Locations {
			check(&l.Result)
		}
	})
}

// BenchmarkTranslate translates a snippet of the kinds people write
// (headers, an if chain with set, a redirect, allow/deny): the cost each
// Ingress with one adds to a build (docs/benchmarks.md).
func BenchmarkTranslate(b *testing.B) {
	const src = `more_set_headers "X-Frame-Options: DENY" "X-Content-Type-Options: nosniff";
add_header Strict-Transport-Security "max-age=31536000" always;
proxy_set_header X-Client $remote_addr;
set $mobile 0;
if ($http_user_agent ~* "(iPhone|Android)") { set $mobile 1; }
if ($mobile = 1) { return 302 https://m.example.com$request_uri; }
rewrite ^/old/(.*)$ /new/$1 permanent;
allow 10.0.0.0/8;
deny all;
`
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Translate(LocationContext, src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

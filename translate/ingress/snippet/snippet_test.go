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
// for an auth-snippet, its headers shown as the request's) and
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
			ctx := LocationContext
			if context == "server" {
				ctx = ServerContext
			}
			res, err := Translate(ctx, string(src))
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

// A branch's conditions and outcome, and the IR they make, must pass the
// IR's own validation: a translation never makes a route Envoy would
// refuse.
func TestBranchesAreValidIR(t *testing.T) {
	for _, src := range []string{
		"if ($http_x ~* \"^a(b|c)$\") { return 301 https://$host/x$request_uri; }",
		"rewrite ^/(\\w+)/(\\d+)$ /items/$2/$1 break;",
		"location ~ ^/a/(.*) { return 302 /b/$1$is_args$args; }",
	} {
		ctx := LocationContext
		if strings.HasPrefix(src, "location") {
			ctx = ServerContext
		}
		res, err := Translate(ctx, src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		branches := res.Branches
		for _, l := range res.Locations {
			branches = append(branches, l.Branches...)
		}
		for _, b := range branches {
			route := &ir.Route{Match: ir.Match{PathType: ir.PathPrefix, Path: "/", Headers: b.When}, Source: &ir.Object{Kind: "Ingress", Name: "a"}}
			switch {
			case b.Outcome.Redirect != nil:
				route.Action.Redirect = b.Outcome.Redirect
			case b.Outcome.Direct != nil:
				route.Action.Direct = b.Outcome.Direct
			default:
				route.Action.Direct = &ir.DirectResponse{Status: 200}
				if b.Outcome.Rewrite != nil {
					route.Policy = &ir.RoutePolicy{Rewrite: &ir.Rewrite{Regex: b.Outcome.Rewrite}}
				}
			}
			doc := &ir.IR{VirtualHosts: []*ir.VirtualHost{{Host: "a.example", Routes: []*ir.Route{route}}}}
			if err := doc.Validate(); err != nil {
				t.Errorf("%s: %v", src, err)
			}
		}
	}
}

package samerouting

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

var (
	ingObj = ir.Object{Kind: "Ingress", Namespace: "web", Name: "app"}
	gwObj  = ir.Object{Kind: "HTTPRoute", Namespace: "web", Name: "app"}
)

func isIng(o ir.Object) bool { return o == ingObj }
func isGW(o ir.Object) bool  { return o == gwObj }

// model is one host's routes, from src, with clusters a and b (backends
// web/a/80 and web/b/80; b's cluster carries a policy, so its name is not
// its backend's).
func model(cert string, src ir.Object, routes ...*ir.Route) *ir.IR {
	for _, r := range routes {
		r.Source = &src
	}
	return &ir.IR{
		VirtualHosts: []*ir.VirtualHost{{Host: "a.example.com", Certificate: cert, Routes: routes}},
		Clusters:     []*ir.Cluster{{Name: "web/a/80", Backend: "web/a/80"}, {Name: "web/b/80/0123456789", Backend: "web/b/80"}},
	}
}

func prefix(p string) ir.Match { return ir.Match{PathType: ir.PathPrefix, Path: p} }

func forward(shares ...ir.WeightedCluster) ir.Action {
	return ir.Action{Forward: &ir.Forward{Clusters: shares}}
}

func TestCompare(t *testing.T) {
	a := ir.WeightedCluster{Cluster: "web/a/80", Weight: 1}
	cases := []struct {
		name    string
		ing, gw *ir.IR
		// differs names a text each difference's Where holds; empty: the
		// same routing.
		differs string
	}{
		{name: "same route", ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a)}),
			gw: model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)})},
		{name: "weights as shares: 90/10 is 9/1",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(ir.WeightedCluster{Cluster: "web/a/80", Weight: 90}, ir.WeightedCluster{Cluster: "web/b/80/0123456789", Weight: 10})}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(ir.WeightedCluster{Cluster: "web/b/80/0123456789", Weight: 1}, ir.WeightedCluster{Cluster: "web/a/80", Weight: 9})})},
		{name: "weights differ", differs: "Prefix /",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(ir.WeightedCluster{Cluster: "web/a/80", Weight: 90}, ir.WeightedCluster{Cluster: "web/b/80/0123456789", Weight: 10})}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(ir.WeightedCluster{Cluster: "web/a/80", Weight: 1}, ir.WeightedCluster{Cluster: "web/b/80/0123456789", Weight: 1})})},
		{name: "two spellings of one regular expression",
			ing: model("", ingObj, &ir.Route{Match: ir.Match{PathType: ir.PathRegex, Path: "(?i)(?:/foo).*"}, Action: forward(a)}),
			gw:  model("", gwObj, &ir.Route{Match: ir.Match{PathType: ir.PathRegex, Path: "(?i)/foo.*"}, Action: forward(a)})},
		{name: "a Location and its parts",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: ir.Action{Redirect: &ir.Redirect{Location: "https://example.com", Code: 301}}}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: ir.Action{Redirect: &ir.Redirect{Scheme: "https", Host: "example.com", Path: "/", StripQuery: true, Code: 301}}})},
		{name: "the query kept", differs: "Prefix /",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: ir.Action{Redirect: &ir.Redirect{Path: "/new", StripQuery: true, Code: 302}}}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: ir.Action{Redirect: &ir.Redirect{Path: "/new", Code: 302}}})},
		{name: "an HTTPS redirect policy and a redirect Route of the HTTP side",
			ing: model("ns/cert", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a),
				Policy: &ir.RoutePolicy{HTTPSRedirect: &ir.HTTPSRedirect{Code: 308, OnlyWithCertificate: true}}}),
			gw: model("ns/cert", gwObj,
				&ir.Route{Match: prefix("/"), Action: ir.Action{Redirect: &ir.Redirect{Scheme: "https", Code: 308}}, Only: ir.HTTP},
				&ir.Route{Match: prefix("/"), Action: forward(a), Only: ir.HTTPS})},
		{name: "served over HTTP only on one side", differs: "HTTPS a.example.com",
			ing: model("ns/cert", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a)}),
			gw:  model("ns/cert", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a), Only: ir.HTTP})},
		{name: "the whole path rewritten, two patterns",
			ing: model("", ingObj, &ir.Route{Match: ir.Match{PathType: ir.PathRegex, Path: "(?i)(?:/old).*"}, Action: forward(a),
				Policy: &ir.RoutePolicy{Rewrite: &ir.Rewrite{Regex: &ir.RegexRewrite{Pattern: "(?i)^(?:/old).*", Substitution: "/new"}}}}),
			gw: model("", gwObj, &ir.Route{Match: ir.Match{PathType: ir.PathRegex, Path: "(?i)(?:/old).*"}, Action: forward(a),
				Policy: &ir.RoutePolicy{Rewrite: &ir.Rewrite{Regex: &ir.RegexRewrite{Pattern: "^.*$", Substitution: "/new"}}}})},
		{name: "a header set on one side only", differs: "Prefix /",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a),
				Policy: &ir.RoutePolicy{ResponseHeaders: &ir.HeaderChanges{Set: []ir.Header{{Name: "X-Frame-Options", Value: "DENY"}}}}}),
			gw: model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)})},
		{name: "access dropped", differs: "Prefix /",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a), Policy: &ir.RoutePolicy{Auth: &ir.Auth{Basic: &ir.BasicAuth{Realm: "r"}}}}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)})},
		{name: "policies left out: timeouts",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a), Policy: &ir.RoutePolicy{Timeouts: &ir.Timeouts{Request: ir.Duration(60e9)}}}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)})},
		{name: "match order", differs: "match order",
			ing: model("", ingObj, &ir.Route{Match: prefix("/a"), Action: forward(a)}, &ir.Route{Match: prefix("/"), Action: forward(a)}),
			gw:  model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)}, &ir.Route{Match: prefix("/a"), Action: forward(a)})},
		{name: "other sources are not compared",
			ing: model("", ingObj, &ir.Route{Match: prefix("/"), Action: forward(a)}),
			gw: func() *ir.IR {
				m := model("", gwObj, &ir.Route{Match: prefix("/"), Action: forward(a)})
				m.VirtualHosts[0].Routes = append(m.VirtualHosts[0].Routes, &ir.Route{Match: prefix("/x"), Action: forward(a), Source: &ir.Object{Kind: "HTTPRoute", Name: "other"}})
				return m
			}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffs, compared := Compare(tc.ing, isIng, tc.gw, isGW)
			if compared == 0 {
				t.Error("nothing compared")
			}
			if tc.differs == "" {
				if len(diffs) > 0 {
					t.Errorf("differences %v, want none", diffs)
				}
				return
			}
			if len(diffs) == 0 {
				t.Fatalf("no difference, want one at %q", tc.differs)
			}
			for _, d := range diffs {
				if !strings.Contains(d.Where, tc.differs) {
					t.Errorf("difference %v, want one at %q", d, tc.differs)
				}
			}
		})
	}
}

package ingress_test

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// reselectManifests are two Services, an Ingress for / of a.example whose
// configuration-snippet is snippet, and others (YAML documents).
func reselectManifests(snippet, others string) string {
	return `
apiVersion: v1
kind: Service
metadata: {name: alpha, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: beta, namespace: default}
spec: {ports: [{name: http, port: 80}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: front
  namespace: default
  annotations:
    nginx.ingress.kubernetes.io/configuration-snippet: '` + snippet + `'
spec:
  rules: [{host: a.example, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: alpha, port: {number: 80}}}}]}}]
` + others
}

// TestRewriteLastChoosesTheLocationAgain: nginx's rewrite ... last
// "starts a search for a new location matching the changed URI"
// (ngx_http_rewrite_module), among every location of the server: the
// snippet's route forwards the new path to the backend of the Ingress
// path that takes it, with that path's policy, where one path alone takes
// it; otherwise its requests answer 503 and the Ingress is told why.
func TestRewriteLastChoosesTheLocationAgain(t *testing.T) {
	beta := func(name, path, pathType, annotations string) string {
		return aExampleIngressYAML(name, path, pathType, "beta", annotations)
	}
	for _, tc := range []struct {
		name, snippet, others string
		cluster               string // the cluster the rewritten requests go to; "": they answer 503
		header                string // a request header the rewritten requests get
	}{
		{"its own location", `rewrite ^/$ /targets last;`, "", "alpha", ""},
		{"another Ingress's", `rewrite ^/old$ /new last;`,
			beta("new", "/new", "Prefix", `nginx.ingress.kubernetes.io/configuration-snippet: "more_set_input_headers \"X-Location: new\";"`), "beta", "X-Location"},
		{"an exact path before a prefix", `rewrite ^/old$ /new last;`,
			beta("new", "/new", "Prefix", "") + beta("exact", "/new", "Exact", `nginx.ingress.kubernetes.io/configuration-snippet: "more_set_input_headers \"X-Exact: 1\";"`), "beta", "X-Exact"},
		{"a server-snippet location answers it", `rewrite ^/old$ /new last;`,
			beta("srv", "/other", "Prefix", `nginx.ingress.kubernetes.io/server-snippet: "location ~ ^/new { return 200; }"`), "", ""},
		{"the path chosen rewrites it", `rewrite ^/old$ /new last;`,
			beta("new", "/new", "Prefix", `nginx.ingress.kubernetes.io/rewrite-target: /`), "", ""},
		{"the path chosen has a snippet of its own", `rewrite ^/old$ /new last;`,
			beta("new", "/new", "Prefix", `nginx.ingress.kubernetes.io/configuration-snippet: "if ($http_x_a) { return 403; }"`), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := stateWith(t, reselectManifests(tc.snippet, tc.others), ingress.References)
			out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080}).Build(st)
			var variant *ir.Route
			for _, vh := range out.VirtualHosts {
				for _, r := range vh.Routes {
					if r.Source != nil && r.Source.Name == "front" && len(r.Match.Headers) > 0 {
						variant = r
					}
				}
			}
			if variant == nil {
				t.Fatalf("no variant route of the snippet (problems %v)", out.Problems)
			}
			var refused []string
			for _, p := range out.Problems {
				if p.Reason == "SnippetRewriteRefused" {
					refused = append(refused, p.Message)
				}
			}
			if tc.cluster == "" {
				if variant.Action.Direct == nil || variant.Action.Direct.Status != 503 || len(refused) != 1 || !strings.Contains(refused[0], "directive rewrite (line 1)") {
					t.Errorf("action %+v, problems %v: want 503 and the rewrite reported", variant.Action, out.Problems)
				}
				return
			}
			if len(refused) > 0 {
				t.Errorf("refused: %v", refused)
			}
			f := variant.Action.Forward
			if f == nil || len(f.Clusters) != 1 || !strings.Contains(f.Clusters[0].Cluster, tc.cluster) {
				t.Fatalf("action %+v: want a forward to %s", variant.Action, tc.cluster)
			}
			p := variant.Policy
			if p == nil || p.Rewrite == nil || p.Rewrite.Regex == nil || p.Rewrite.Regex.Substitution != strings.Fields(tc.snippet)[2] {
				t.Errorf("policy %+v: want the path rewritten to the literal", p)
			}
			if tc.header != "" && (p == nil || p.RequestHeaders == nil || len(p.RequestHeaders.Set) != 1 || p.RequestHeaders.Set[0].Name != tc.header) {
				t.Errorf("policy %+v: want the chosen path's %s", p, tc.header)
			}
		})
	}
}

// aExampleIngressYAML is a YAML document (after a "---") of an Ingress
// named name with one path of a.example to service's port 80, carrying
// annotations (a YAML map's entries).
func aExampleIngressYAML(name, path, pathType, service, annotations string) string {
	return `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ` + name + `
  namespace: default
  annotations: {` + annotations + `}
spec:
  rules: [{host: a.example, http: {paths: [{path: ` + path + `, pathType: ` + pathType + `, backend: {service: {name: ` + service + `, port: {number: 80}}}}]}}]
`
}

package ingress_test

import (
	"strings"
	"testing"

	"github.com/ingress-xds/ingress-xds/translate/ingress"
)

// A server-snippet's error_page is inherited by every location of the
// host without one of its own (ngx_http_core_module: "inherited from the
// previous configuration level if and only if there are no error_page
// directives defined on the current level"), where it takes nginx's own
// answers alone, the backend's passing through: of no effect while no
// path of the host answers one of its codes itself; where one does, the
// Ingress's paths of the host answer 503 and the Ingress is told.
func TestServerSnippetErrorPage(t *testing.T) {
	ingressYAML := func(name, path, annotations string) string {
		return aExampleIngressYAML(name, path, "Prefix", "echo", annotations)
	}
	service := `
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec: {ports: [{name: http, port: 80}]}
`
	for _, tc := range []struct {
		name, snippet, others string
		refused               string // in the problem; "": served
	}{
		{"nothing answers 404", `error_page 404 /custom_404.html;`, "", ""},
		{"every proxying location answers 502", `error_page 502 /50x.html;`, "", "a path answers 502 itself"},
		{"the snippet's own deny", `error_page 403 /denied.html; deny 10.0.0.0/8;`, "", "a path answers 403 itself (the snippet's allow and deny)"},
		{"another Ingress's allowlist", `error_page 403 /denied.html;`,
			ingressYAML("other", "/admin", `nginx.ingress.kubernetes.io/whitelist-source-range: 10.0.0.0/8`), "a path answers 403 itself (allow and deny lists)"},
		{"custom-http-errors on the host", `error_page 404 /custom_404.html;`,
			ingressYAML("other", "/admin", `nginx.ingress.kubernetes.io/custom-http-errors: "404", nginx.ingress.kubernetes.io/default-backend: echo`), "custom-http-errors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifests := service + ingressYAML("server", "/", `nginx.ingress.kubernetes.io/server-snippet: "`+tc.snippet+`"`) + tc.others
			out := ingress.NewBuilder(ingress.Options{HTTPPort: 8080}).Build(stateWith(t, manifests, ingress.References))
			var problems []string
			for _, p := range out.Problems {
				if p.Name == "server" {
					problems = append(problems, p.Reason+": "+p.Message)
				}
			}
			var own []int
			for _, vh := range out.VirtualHosts {
				for _, r := range vh.Routes {
					if r.Source != nil && r.Source.Name == "server" {
						if r.Action.Direct != nil {
							own = append(own, int(r.Action.Direct.Status))
						} else {
							own = append(own, 0)
						}
					}
				}
			}
			if len(own) == 0 {
				t.Fatalf("no route of the Ingress (problems %v)", out.Problems)
			}
			if tc.refused == "" {
				if len(problems) > 0 || own[len(own)-1] != 0 {
					t.Errorf("routes %v, problems %v: want the path served, nothing reported", own, problems)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0], tc.refused) || !strings.Contains(problems[0], "directive error_page (line 1)") {
				t.Errorf("problems %v: want error_page refused for %q", problems, tc.refused)
			}
			for _, status := range own {
				if status != 503 {
					t.Errorf("routes %v: want every path of the Ingress on the host answering 503", own)
					break
				}
			}
		})
	}
}

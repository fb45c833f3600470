package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// The audit's exit code is for CI: 1 when some Ingress of the class would
// be refused, 0 otherwise (also with --unsupported-annotations=ignore,
// which serves it without the key), and a usage error is not 0 either.
func TestAuditExitCodes(t *testing.T) {
	const cluster = "../../translate/audit/testdata/nginx-cluster.yaml"
	nginx := []string{"--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx"}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"an ingress-nginx cluster with a snippet", append([]string{"audit", "-f", cluster}, nginx...), 1,
			[]string{"shop/snippet: REFUSED", "would not be served (refused)", "shop/regex-neighbour: served"}},
		{"the same, served without the snippet", append([]string{"audit", "-f", cluster, "--unsupported-annotations=ignore"}, nginx...), 0,
			[]string{"shop/snippet: served", "AnnotationIgnored"}},
		// Of the default class, that cluster's Ingresses are not ours; the
		// class-less one (the legacy annotation names nginx) neither.
		{"another class", []string{"audit", "-f", cluster}, 0, []string{"0 Ingresses of the class"}},
		{"the examples", []string{"audit", "-f", "../../examples"}, 0, []string{"default/rewrite: served", "regex-prefix-case-insensitive"}},
		{"no such output", []string{"audit", "-f", cluster, "-o", "yaml"}, 1, []string{`-o "yaml"`}},
		{"both sources", []string{"audit", "-f", cluster, "--kubeconfig", "/nonexistent"}, 1, []string{"choose one"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runCommand(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// -o json is one JSON document on stdout, whatever the exit code.
func TestAuditJSON(t *testing.T) {
	out, err := captureAudit(t, "-f", "../../translate/audit/testdata/nginx-cluster.yaml", "--controller-class", "k8s.io/ingress-nginx", "--ingress-class", "nginx", "-o", "json")
	if err != errRefused {
		t.Fatalf("error %v, want errRefused", err)
	}
	var report struct {
		Ingresses []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
		} `json:"ingresses"`
		Summary struct {
			Refused int `json:"refused"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if report.Summary.Refused != 1 || len(report.Ingresses) != 8 {
		t.Errorf("refused %d of %d Ingresses, want 1 of 8:\n%s", report.Summary.Refused, len(report.Ingresses), out)
	}
}

func captureAudit(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var b strings.Builder
	err := runAudit(t.Context(), args, &b)
	return b.String(), err
}

// --to-gateway-api prints the objects on stdout and the report on
// stderr (the JSON one with -o json), or writes them where asked, and
// exits 1 when some Ingress routes differently.
func TestAuditToGatewayAPI(t *testing.T) {
	const cases = "../../translate/audit/testdata/togateway/"
	out, code := runCommand(t, "audit", "--to-gateway-api", "-f", cases+"rewrite.yaml")
	if code != 1 || !strings.Contains(out, "kind: HTTPRoute") || !strings.Contains(out, "web/captures: routes differently") ||
		!strings.Contains(out, "route differently through Gateway API") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	out, code = runCommand(t, "audit", "--to-gateway-api", "-f", cases+"basic.yaml", "--gateway-namespace", "gateways", "-o", "json")
	if code != 0 || !strings.Contains(out, "namespace: gateways") || !strings.Contains(out, `"sameRouting": true`) {
		t.Errorf("exit %d:\n%s", code, out)
	}

	dir := t.TempDir()
	var stdout strings.Builder
	err := runAudit(t.Context(), []string{"--to-gateway-api", "-f", cases + "basic.yaml", "--gateway-api-dir", dir, "--report", dir + "/report.txt"}, &stdout)
	if err != nil || stdout.Len() > 0 {
		t.Fatalf("error %v, stdout %q", err, stdout.String())
	}
	report, err := os.ReadFile(dir + "/report.txt")
	if err != nil || !strings.Contains(string(report), "web/shop: same routing") {
		t.Errorf("report %q: %v", report, err)
	}
	if _, err := os.Stat(dir + "/httproute-web-shop-shop-example-com.yaml"); err != nil {
		t.Errorf("the HTTPRoute's file: %v", err)
	}
	if err := runAudit(t.Context(), []string{"--report", dir + "/r", "-f", cases + "basic.yaml"}, &stdout); err == nil {
		t.Error("--report without --to-gateway-api: no error")
	}
}

package load

import (
	"slices"
	"strings"
	"testing"
)

func TestExpandCommand(t *testing.T) {
	p := Placeholders{Kubeconfig: "/tmp/kc", XDSAddress: "127.0.0.1:1234", XDSPort: "1234", HTTPPort: "5678"}
	for _, tc := range []struct {
		template  string
		env, argv []string
		err       string
	}{
		{
			template: "bin/ingress-xds serve --kubeconfig {kubeconfig} --xds-address {xds} --http-port {http_port}",
			argv:     []string{"bin/ingress-xds", "serve", "--kubeconfig", "/tmp/kc", "--xds-address", "127.0.0.1:1234", "--http-port", "5678"},
		},
		{
			template: `GOGC=200 GOMAXPROCS=2 contour serve --xds-port={xds_port} --note 'a b' "c {xds_port}"`,
			env:      []string{"GOGC=200", "GOMAXPROCS=2"},
			argv:     []string{"contour", "serve", "--xds-port=1234", "--note", "a b", "c 1234"},
		},
		{template: `a  "x\"y"   'z\'`, argv: []string{"a", `x"y`, `z\`}},
		{template: `a ""`, argv: []string{"a", ""}},
		{template: "serve {pprof}", err: "unknown placeholder {pprof}"},
		{template: "serve 'open", err: "unterminated"},
		{template: "X=1", err: "empty"},
	} {
		env, argv, err := ExpandCommand(tc.template, p)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ExpandCommand(%q): error %v, want one saying %q", tc.template, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ExpandCommand(%q): %v", tc.template, err)
			continue
		}
		if !slices.Equal(env, tc.env) || !slices.Equal(argv, tc.argv) {
			t.Errorf("ExpandCommand(%q) = %q, %q; want %q, %q", tc.template, env, argv, tc.env, tc.argv)
		}
	}
}

func TestWithValidateIR(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"bin/ingress-xds serve --insecure", "bin/ingress-xds serve --insecure --validate-ir"},
		{"bin/ingress-xds serve --validate-ir=false", "bin/ingress-xds serve --validate-ir=false"},
		{"contour serve --insecure", "contour serve --insecure"},
		{"bin/ingress-xds translate -f x", "bin/ingress-xds translate -f x"},
	} {
		if got := strings.Join(withValidateIR(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("withValidateIR(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

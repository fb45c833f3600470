package annotations

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ingress-xds/ingress-xds/internal/golden"
)

func reasons(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		out = append(out, is.Reason)
	}
	return out
}

func TestParseReadsEachPrefixAndReportsWhatItCannotHonour(t *testing.T) {
	r := New("")
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		want    bool
		set     bool
		reasons []string
	}{
		{"own prefix", map[string]string{"ingress-xds.io/force-ssl-redirect": "true"}, true, true, nil},
		{"legacy prefix, any case and spaces", map[string]string{"ingress.kubernetes.io/force-ssl-redirect": " TRUE "}, true, true, nil},
		{"false", map[string]string{"ingress-xds.io/force-ssl-redirect": "false"}, false, true, nil},
		{"a value that does not parse is not set", map[string]string{"ingress-xds.io/force-ssl-redirect": "yes"}, false, false, []string{"InvalidAnnotation"}},
		{"an unknown key under a known prefix", map[string]string{"ingress-xds.io/no-such-key": "1"}, false, false, []string{"UnknownAnnotation"}},
		{"an ingress-nginx key we do not read yet", map[string]string{"nginx.ingress.kubernetes.io/fastcgi-index": "index.php"}, false, false, []string{"UnsupportedAnnotation"}},
		{"a typo under the ingress-nginx prefix", map[string]string{"nginx.ingress.kubernetes.io/fastcgi-indx": "index.php"}, false, false, []string{"UnknownAnnotation"}},
		{"other prefixes are not ours", map[string]string{"example.com/force-ssl-redirect": "true", "kubernetes.io/ingress.class": "x"}, false, false, nil},
		{"our prefix wins, and the other value is reported", map[string]string{
			"ingress-xds.io/force-ssl-redirect": "false", "ingress.kubernetes.io/force-ssl-redirect": "true"}, false, true, []string{"AnnotationConflict"}},
		{"the same value twice is no conflict", map[string]string{
			"ingress-xds.io/force-ssl-redirect": "true", "ingress.kubernetes.io/force-ssl-redirect": "true"}, true, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, issues := r.Parse(tc.ann)
			got, set := ForceSSLRedirect.Get(v)
			if got != tc.want || set != tc.set {
				t.Errorf("force-ssl-redirect = %v (set %v), want %v (set %v)", got, set, tc.want, tc.set)
			}
			if !slices.Equal(reasons(issues), tc.reasons) {
				t.Errorf("issues %v, want %v", issues, tc.reasons)
			}
		})
	}
}

// The ingress-nginx prefix is the operator's (--annotations-prefix): under
// another, the default prefix is nobody's.
func TestNginxPrefixIsConfigurable(t *testing.T) {
	r := New("example.org")
	if _, issues := r.Parse(map[string]string{"example.org/whatever": "1"}); !slices.Equal(reasons(issues), []string{"UnknownAnnotation"}) {
		t.Errorf("a key under the configured prefix: issues %v", issues)
	}
	if _, issues := r.Parse(map[string]string{NginxPrefix + "/whatever": "1"}); len(issues) != 0 {
		t.Errorf("a key under the default prefix, with another configured: issues %v", issues)
	}
}

// Every key is declared once, under at least one prefix, with a scope and
// a doc line.
func TestTableIsComplete(t *testing.T) {
	for _, d := range table() {
		if d.name == "" || d.under == 0 || d.doc == "" || d.parse == nil {
			t.Errorf("%q lacks a name, a prefix, a doc line or a parser", d.name)
		}
		switch d.scope {
		case ScopeRoute, ScopeHost, ScopeCluster:
		default:
			t.Errorf("%s: scope %q", d.name, d.scope)
		}
	}
}

// docs/annotations.md is generated from the table: regenerate it with
// `make golden` (go test ./translate/ingress/annotations -update).
func TestAnnotationsDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "annotations.md")
	if _, err := os.Stat(path); err != nil && !golden.Updating() {
		t.Fatalf("%v: run `make golden`", err)
	}
	golden.Check(t, path, New("").Markdown())
}

// ingress-nginx's keys that are not honoured yet are told apart from typos.
func TestNginxKeysNotYetHonouredAreReportedAsSuch(t *testing.T) {
	r := New("")
	_, issues := r.Parse(map[string]string{NginxPrefix + "/fastcgi-index": "index.php", NginxPrefix + "/fastcgi-indx": "index.php"})
	if got := reasons(issues); !slices.Equal(got, []string{"UnknownAnnotation", "UnsupportedAnnotation"}) && !slices.Equal(got, []string{"UnsupportedAnnotation", "UnknownAnnotation"}) {
		t.Errorf("issues %v", issues)
	}
	if n := len(nginxCatalogue()); n != 136 {
		t.Errorf("the catalogue has %d of ingress-nginx's 136 keys", n)
	}
	seen := map[string]bool{}
	for _, k := range nginxCatalogue() {
		if seen[k.name] {
			t.Errorf("%s is listed twice", k.name)
		}
		seen[k.name] = true
	}
}

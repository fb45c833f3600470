package annotations

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Every key said to guard access is one of ingress-nginx's: a typo there
// would leave the real key ignored, a silent open door.
func TestAccessControlsAreCatalogueKeys(t *testing.T) {
	r := New("")
	for name := range accessControls() {
		if r.catalogue[name].name != name {
			t.Errorf("access control %q is not a key of ingress-nginx's catalogue", name)
		}
	}
	for _, name := range []string{"configuration-snippet", "server-snippet", "stream-snippet", "auth-snippet", "modsecurity-snippet",
		"enable-modsecurity", "enable-owasp-core-rules", "modsecurity-transaction-id"} {
		if _, ok := r.AccessControl(name); !ok {
			t.Errorf("%s is not an access control", name)
		}
	}
	// The old name reads as the new.
	if _, ok := r.AccessControl("whitelist-source-range"); !ok {
		t.Error("whitelist-source-range is not an access control")
	}
}

func refusals(issues []Issue) []string {
	var out []string
	for _, is := range issues {
		if is.Refusal != "" {
			out = append(out, is.Key)
		}
	}
	return out
}

func TestAnAccessControlNobodyHonoursRefuses(t *testing.T) {
	r := New("")
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		refused []string
	}{
		{"a snippet nobody honours", map[string]string{"nginx.ingress.kubernetes.io/stream-snippet": "deny all;"}, []string{"nginx.ingress.kubernetes.io/stream-snippet"}},
		// Translated (translate/ingress/snippet), or refused there by
		// directive: the registry only bounds their size.
		{"a translated snippet", map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "deny all;"}, nil},
		{"modsecurity, whatever its value", map[string]string{"nginx.ingress.kubernetes.io/enable-modsecurity": "false"}, []string{"nginx.ingress.kubernetes.io/enable-modsecurity"}},
		{"two at once", map[string]string{"nginx.ingress.kubernetes.io/modsecurity-snippet": "x", "nginx.ingress.kubernetes.io/stream-snippet": "y"},
			[]string{"nginx.ingress.kubernetes.io/modsecurity-snippet", "nginx.ingress.kubernetes.io/stream-snippet"}},
		{"a snippet over nginxconf.MaxSize", map[string]string{"nginx.ingress.kubernetes.io/server-snippet": strings.Repeat("#", 64<<10+1)},
			[]string{"nginx.ingress.kubernetes.io/server-snippet"}},
		{"a key that does not guard access is only reported", map[string]string{"nginx.ingress.kubernetes.io/fastcgi-index": "index.php"}, nil},
		{"under another prefix it is nobody's key", map[string]string{"example.com/configuration-snippet": "deny all;"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, issues := r.Parse(tc.ann)
			if got := refusals(issues); !slices.Equal(got, tc.refused) {
				t.Errorf("refused by %v, want %v (issues %v)", got, tc.refused, issues)
			}
		})
	}
	// Under an operator's prefix, the same.
	if _, issues := New("example.org").Parse(map[string]string{"example.org/modsecurity-snippet": "x"}); len(refusals(issues)) != 1 {
		t.Errorf("modsecurity-snippet under the configured prefix: issues %v", issues)
	}
}

// withDefinition is a registry whose table also has d, as a group would
// add it.
func withDefinition(d *definition) *Registry {
	r := New("")
	r.defs = append(r.defs, d)
	for i, full := range r.fullKeys(d) {
		r.byKey[full] = rankedDef{def: d, rank: i}
	}
	return r
}

// A group that honours an access key only adds its definition: the key
// stops refusing. A value its parser rejects refuses (a broken allow-list
// must not become no allow-list), and a definition whose verdict is Refused
// refuses whatever its value.
func TestADefinitionDecidesWhetherAnAccessControlRefuses(t *testing.T) {
	const key = "nginx.ingress.kubernetes.io/allowlist-source-range"
	parseCIDR := boxed(func(s string) (string, error) {
		if s != "10.0.0.0/8" {
			return "", errors.New("not a CIDR")
		}
		return s, nil
	})
	honoured := withDefinition(&definition{name: "allowlist-source-range", aliases: []string{"whitelist-source-range"}, under: Nginx, parse: parseCIDR})
	if _, issues := honoured.Parse(map[string]string{key: "10.0.0.0/8"}); len(issues) != 0 {
		t.Errorf("an honoured access key with a good value: issues %v", issues)
	}
	for _, k := range []string{key, "nginx.ingress.kubernetes.io/whitelist-source-range"} {
		_, issues := honoured.Parse(map[string]string{k: "10.0.0.0/33"})
		if len(issues) != 1 || issues[0].Refusal == "" || issues[0].Reason != "InvalidAnnotation" {
			t.Errorf("%s with a value that does not parse: issues %v, want one refusal", k, issues)
		}
	}
	notAccess := withDefinition(&definition{name: "fastcgi-index", under: Nginx, parse: parseCIDR})
	if _, issues := notAccess.Parse(map[string]string{"nginx.ingress.kubernetes.io/fastcgi-index": "x"}); len(refusals(issues)) != 0 {
		t.Errorf("a key that does not guard access, with a bad value: issues %v, want no refusal", issues)
	}
	refused := withDefinition(&definition{name: "auth-type", under: Nginx | Own, verdict: Refused, note: "digest cannot be verified", parse: parseCIDR})
	for _, k := range []string{"nginx.ingress.kubernetes.io/auth-type", "ingress-xds.io/auth-type"} {
		_, issues := refused.Parse(map[string]string{k: "10.0.0.0/8"})
		if len(issues) != 1 || issues[0].Refusal != "digest cannot be verified" {
			t.Errorf("%s, a refused definition: issues %v, want its refusal", k, issues)
		}
	}
}

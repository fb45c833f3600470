package annotations

import "testing"

// VerdictOf agrees with Parse on every key of ingress-nginx's registry,
// every key of the table under every prefix it is read under, and a key
// nobody knows: a refused key is refused by Parse, a key not honoured yet
// is reported as such, an unknown one as unknown, and a key with any other
// verdict is neither. The audit relies on it to say what serve does.
func TestVerdictOfAgreesWithParse(t *testing.T) {
	r := New("")
	keys := r.Keys()
	for _, k := range nginxCatalogue() {
		keys = append(keys, NginxPrefix+"/"+k.name)
	}
	keys = append(keys, NginxPrefix+"/no-such-key", OwnPrefix+"/no-such-key", LegacyPrefix+"/rewrite-target")
	for _, key := range keys {
		v, ok := r.VerdictOf(key)
		if !ok {
			t.Errorf("%s: not read, want a verdict", key)
			continue
		}
		_, issues := r.Parse(map[string]string{key: "x"})
		reasons := map[string]bool{}
		for _, is := range issues {
			reasons[is.Reason] = true
		}
		var want string
		switch v.Verdict {
		case Refused:
			want = "RefusedAnnotation"
		case NotYet:
			want = "UnsupportedAnnotation"
		case Unknown:
			want = "UnknownAnnotation"
		}
		for _, reason := range []string{"RefusedAnnotation", "UnsupportedAnnotation", "UnknownAnnotation"} {
			if reasons[reason] != (reason == want) {
				t.Errorf("%s: verdict %q, but Parse's issues are %v", key, v.Verdict, issues)
			}
		}
	}
	if _, ok := r.VerdictOf("kubernetes.io/ingress.class"); ok {
		t.Error("kubernetes.io/ingress.class: a verdict for a key under no prefix the registry reads")
	}
}

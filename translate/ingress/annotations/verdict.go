package annotations

import "strings"

// Unknown is the verdict of a key under a prefix ingress-xds reads that is
// neither in its table nor in ingress-nginx's registry (a typo, or another
// controller's key): it is reported and ignored.
const Unknown Verdict = "unknown"

// KeyVerdict is what ingress-xds does with one annotation key as written
// on an object, for `ingress-xds audit`.
type KeyVerdict struct {
	Verdict Verdict
	// Note is the difference, or why the key is ignored or refused, as
	// docs/annotations.md says it.
	Note string
}

// VerdictOf says what ingress-xds does with a full key (prefix/name): the
// table's verdict for a key it declares under that prefix, else, under
// ingress-nginx's prefix, Refused for a key of ingress-nginx's that guards
// access (refusal.go) and NotYet for another, else Unknown. It reports
// false for a key under none of the prefixes read (another tool's
// annotation, which ingress-xds never looks at). It answers as Parse and
// docs/annotations.md do, from the same table.
func (r *Registry) VerdictOf(key string) (KeyVerdict, bool) {
	if !r.known(key) {
		return KeyVerdict{}, false
	}
	prefix, name, _ := strings.Cut(key, "/")
	if rd, ok := r.byKey[key]; ok {
		return KeyVerdict{Verdict: rd.def.verdictOrDefault(), Note: rd.def.note}, true
	}
	if prefix == r.nginxPrefix {
		if why := r.refusal(name, nil, true); why != "" {
			return KeyVerdict{Verdict: Refused, Note: "Not honoured yet, and " + why + ": an Ingress carrying it is not served."}, true
		}
		if r.catalogue[name].name != "" {
			return KeyVerdict{Verdict: NotYet, Note: "Not honoured yet: reported and ignored."}, true
		}
	}
	return KeyVerdict{Verdict: Unknown, Note: "Not a key ingress-xds or ingress-nginx knows: reported and ignored."}, true
}

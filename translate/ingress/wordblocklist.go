package ingress

import (
	"maps"
	"slices"
	"strings"
)

// refuseBlockedWords refuses the Ingress when one of its annotations under
// ingress-nginx's prefix has a value that holds a word of the ConfigMap's
// annotation-value-word-blocklist, as ingress-nginx's store skips such an
// Ingress (store.go syncIngress, checkBadAnnotationValue): a team that
// relies on the list keeps what it refused. It refuses whatever
// --unsupported-annotations says, the list being the operator's own
// access control. It reports whether it refused.
func (f *fragmentBuilder) refuseBlockedWords() bool {
	words := f.opts.config.blockedWords()
	if len(words) == 0 {
		return false
	}
	prefix := f.reg.NginxPrefix() + "/"
	for _, key := range slices.Sorted(maps.Keys(f.ing.Annotations)) {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		for _, w := range words {
			if strings.Contains(f.ing.Annotations[key], w) {
				f.refuse(key, "its value holds %q, a word of the ConfigMap's annotation-value-word-blocklist, so ingress-nginx does not serve the Ingress", w)
				return true
			}
		}
	}
	return false
}

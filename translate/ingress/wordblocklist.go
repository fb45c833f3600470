package ingress

import (
	"maps"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
)

// refuseBlockedWords refuses the Ingress when one of its annotations under
// ingress-nginx's prefix has a value that holds a word of the ConfigMap's
// annotation-value-word-blocklist, as ingress-nginx's store skips such an
// Ingress (store.go syncIngress, checkBadAnnotationValue): a team that
// relies on the list keeps what it refused. It refuses whatever
// --unsupported-annotations says, the list being the operator's own
// access control. It reports whether it refused.
func (f *fragmentBuilder) refuseBlockedWords() bool {
	key, word := blockedWord(f.reg, f.ing, f.opts.config.blockedWords())
	if key == "" {
		return false
	}
	f.refuse(key, "its value holds %q, a word of the ConfigMap's annotation-value-word-blocklist, so ingress-nginx does not serve the Ingress", word)
	return true
}

// blockedWord is the first annotation under ingress-nginx's prefix, by
// name, whose value holds one of words, and the word; "" when none does.
func blockedWord(reg *annotations.Registry, ing *networkingv1.Ingress, words []string) (key, word string) {
	if len(words) == 0 {
		return "", ""
	}
	prefix := reg.NginxPrefix() + "/"
	for _, key := range slices.Sorted(maps.Keys(ing.Annotations)) {
		if !strings.HasPrefix(key, prefix) {
			continue
		}
		for _, w := range words {
			if strings.Contains(ing.Annotations[key], w) {
				return key, w
			}
		}
	}
	return "", ""
}

package configmap

import "strings"

// wordBlocklist reads annotation-value-word-blocklist as ingress-nginx's
// store does: the value, trimmed, split at commas, each word as written.
// An empty word, which would match every value, is left out.
func wordBlocklist(_ *Table, s *Settings, _, value string) error {
	s.BlockedWords = nil
	for _, w := range strings.Split(strings.TrimSpace(value), ",") {
		if w != "" {
			s.BlockedWords = append(s.BlockedWords, w)
		}
	}
	return nil
}

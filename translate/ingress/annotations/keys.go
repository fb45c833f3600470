package annotations

import "slices"

// The keys. Each is declared once here and listed in table; a new
// annotation is a Key, a parser (parsers.go) and a line in table, then its
// use in the front-end (translate/ingress) and, if it needs Envoy
// configuration the IR cannot yet express, a field in the IR.

// table lists every key, in the order docs/annotations.md shows them.
func table() []*definition {
	return append(append(redirectKeys(),
		UseRegex.def,
		RewriteTarget.def,
		XForwardedPrefix.def,
		ServerAlias.def,
	), slices.Concat(proxyKeys(), proxyRewriteKeys(), mirrorKeys(), upstreamKeys(), canaryKeys(), affinityKeys(), fallbackKeys(), corsKeys(), headerKeys(), accessKeys(), rateLimitKeys(), basicAuthKeys(), authTLSKeys(), externalAuthKeys(), satisfyKeys(), sslCipherKeys())...)
}

package annotations

import "slices"

// The keys. Each is declared once, by key (registry.go) with its typed
// parser, in its group's keys_<group>.go, and listed in table; then its
// group's parser in the front-end (translate/ingress) reads it, and, if it
// needs Envoy configuration the IR cannot yet express, a field in the IR
// (docs/ARCHITECTURE.md, "A new annotation").

// table lists every key, in the order docs/annotations.md shows them.
func table() []*definition {
	return append(append(redirectKeys(),
		UseRegex.def,
		RewriteTarget.def,
		XForwardedPrefix.def,
		ServerAlias.def,
	), slices.Concat(proxyKeys(), proxyRewriteKeys(), mirrorKeys(), upstreamKeys(), canaryKeys(), affinityKeys(), fallbackKeys(), corsKeys(), headerKeys(), accessKeys(), rateLimitKeys(), basicAuthKeys(), authTLSKeys(), externalAuthKeys(), satisfyKeys(), sslCipherKeys(), snippetKeys(), logKeys(), opentelemetryKeys())...)
}

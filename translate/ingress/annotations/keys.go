package annotations

// The keys. Each is declared once here and listed in table; a new
// annotation is a Key, a parser (parsers.go) and a line in table, then its
// use in the front-end (translate/ingress) and, if it needs Envoy
// configuration the IR cannot yet express, a field in the IR.

// ForceSSLRedirect answers plain-HTTP requests with a redirect to HTTPS,
// whether or not the host has a certificate.
var ForceSSLRedirect = Key[bool]{&definition{
	name:  "force-ssl-redirect",
	under: Own | Legacy,
	scope: ScopeRoute,
	doc:   `"true": plain-HTTP requests get a 301 to the same URL over HTTPS, with or without a certificate for the host.`,
	parse: parseBool,
}}

// table lists every key, in the order docs/annotations.md shows them.
func table() []*definition {
	return append([]*definition{
		ForceSSLRedirect.def,
	}, proxyKeys()...)
}

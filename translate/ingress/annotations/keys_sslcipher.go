package annotations

import "errors"

// SSLCiphers are the TLS 1.2 cipher suites of a host's HTTPS filter chain
// (nginx's ssl_ciphers of its server), over the controller ConfigMap's
// ssl-ciphers.
var SSLCiphers = key[[]string](&definition{
	name:  "ssl-ciphers",
	under: Nginx,
	scope: ScopeHost,
	doc: `The TLS 1.2 cipher suites the Ingress's hosts offer over HTTPS, colon-separated OpenSSL names, in order of preference ` +
		`("ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-SHA"), over the controller ConfigMap's ssl-ciphers; "DEFAULT": Envoy's.`,
	verdict: HonouredWithDifference,
	note: `Envoy takes a list of BoringSSL's cipher names, not OpenSSL's expressions: a value with an alias or an exclusion ` +
		`("HIGH:!aNULL") or a name BoringSSL lacks is reported and not applied. As in ingress-nginx, the oldest Ingress of a host ` +
		`that sets it sets it for the host. TLS 1.3's suites are not configurable.`,
}, parseCiphers)

// SSLPreferServerCiphers is nginx's ssl_prefer_server_ciphers of the
// Ingress's servers: Envoy always takes the host's order (BoringSSL's
// server preference, as nginx.tmpl's http-level "on" does), so only
// "true" is honoured and "false" is reported.
var SSLPreferServerCiphers = key[bool](&definition{
	name:  "ssl-prefer-server-ciphers",
	under: Nginx,
	scope: ScopeHost,
	doc: `"true": a TLS 1.2 client gets the first cipher suite of the host's ssl-ciphers (or the ConfigMap's, or Envoy's) that ` +
		`it offers, whatever its own order, as ingress-nginx does by default.`,
	verdict: HonouredWithDifference,
	note: `Envoy always chooses by the server's order: "false" (nginx's ssl_prefer_server_ciphers off, the client's order) ` +
		`is reported and not applied. TLS 1.3's suite is BoringSSL's choice either way.`,
}, parsePreferServer)

// parsePreferServer reads ssl-prefer-server-ciphers: "true" alone is what
// Envoy does.
func parsePreferServer(s string) (bool, error) {
	prefer, err := parseBool(s)
	if err == nil && !prefer {
		err = errors.New(`only "true" is honoured: Envoy always chooses a TLS 1.2 cipher suite by the host's order, not the client's`)
	}
	return prefer, err
}

// sslCipherKeys are the per-host TLS keys.
func sslCipherKeys() []*definition {
	return []*definition{SSLCiphers.def, SSLPreferServerCiphers.def}
}

package annotations

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

// sslCipherKeys are the per-host TLS keys.
func sslCipherKeys() []*definition { return []*definition{SSLCiphers.def} }

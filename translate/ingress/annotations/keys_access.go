package annotations

// ingress-nginx's source-range keys (its Allowlist and Denylist groups):
// which client addresses may reach the Ingress's paths. The client's
// address is the peer's, or, with serve --trusted-forwarded-hops, the one
// X-Forwarded-For gives past the trusted proxies. translate/ingress/access.go
// applies them, translate/envoy/iprules.go renders them as RBAC. A value
// that does not parse refuses the Ingress (refusal.go): a broken allow-list
// must not become no allow-list.

// clientAddressNote says which address the keys match, for their notes.
const clientAddressNote = `The client's address is the connection's peer, or with serve --trusted-forwarded-hops N the address ` +
	`X-Forwarded-For names N hops from its right (Envoy's xff_num_trusted_hops); ingress-nginx with use-forwarded-headers takes the ` +
	`leftmost address a trusted proxy passed on (real_ip_recursive), which the client itself may have written.`

// encodedSlashNote is where Envoy's routes and nginx's locations part.
const encodedSlashNote = `Paths are matched as nginx matches locations after /a/../b and // are resolved. A path with an encoded ` +
	`slash (/admin%2Fx), which nginx decodes to choose the location and forwards as sent, gets a 307 to the decoded path (serve ` +
	`--escaped-slashes=redirect, the default), which is then checked as any other; --escaped-slashes=keep forwards it as sent, as ` +
	`ingress-nginx does, but Envoy then routes it as sent too, so it misses /admin's route and its ranges.`

// AllowlistSourceRange admits only the clients in its ranges.
var AllowlistSourceRange = key[[]string](&definition{
	name:    "allowlist-source-range",
	aliases: []string{"whitelist-source-range"},
	under:   Nginx,
	scope:   ScopeRoute,
	doc: `Client addresses allowed on the Ingress's paths: CIDRs and single addresses, IPv4 or IPv6, comma separated ` +
		`("10.0.0.0/8, 2001:db8::/32, 192.168.1.1"). Any other client gets 403. With denylist-source-range, a client in the deny-list ` +
		`is refused even when the allow-list covers it (nginx's deny rules come first).`,
	verdict: HonouredWithDifference,
	note: `Envoy's RBAC filter answers 403 on each of the Ingress's routes, as nginx's allow and deny rules do for its locations; ` +
		`another Ingress's paths on the same host are untouched. A value that does not parse (or an empty one) refuses the Ingress: ` +
		`its paths answer 503, as ingress-nginx denies the location. ` + clientAddressNote + ` ` + encodedSlashNote,
}, parseCIDRs)

// DenylistSourceRange refuses the clients in its ranges.
var DenylistSourceRange = key[[]string](&definition{
	name:  "denylist-source-range",
	under: Nginx,
	scope: ScopeRoute,
	doc: `Client addresses refused on the Ingress's paths (403): CIDRs and single addresses, IPv4 or IPv6, comma separated. ` +
		`It is checked before allowlist-source-range.`,
	verdict: HonouredWithDifference,
	note:    `As allowlist-source-range: RBAC on the Ingress's routes, 503 on its paths for a value that does not parse. ` + clientAddressNote + ` ` + encodedSlashNote,
}, parseCIDRs)

// accessKeys lists the keys of this file, for table.
func accessKeys() []*definition {
	return []*definition{AllowlistSourceRange.def, DenylistSourceRange.def}
}

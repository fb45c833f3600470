package annotations

// Satisfy is nginx's satisfy of a location: "any" lets a request in when
// it passes one of the access checks (the source ranges, or one of the
// kinds of authentication), where the default "all" asks every one.
var Satisfy = key[string](&definition{
	name:  "satisfy",
	under: Nginx,
	scope: ScopeRoute,
	doc: `"any": a request passes when one of the Ingress's access checks lets it in: its address (allowlist-source-range, ` +
		`denylist-source-range) or its credentials (auth-type basic, auth-url), so that an allowed address needs no password and ` +
		`anyone else gets the authentication's answer (401 and its challenge, auth-signin's redirect; 403 when only an address check ` +
		`refused it). "all" (the default): every check must let it in. Another value is ignored, as ingress-nginx ignores it.`,
	verdict: HonouredWithDifference,
	note: `With "any" the address check moves into the authorisation service beside Envoy (which already answers for the ` +
		`authentication), so that one place decides; the rate limits, the client certificate and the ConfigMap's ` +
		`block-user-agents and block-referers still apply before it, as nginx's are not access-phase checks. A ConfigMap ` +
		`block-cidrs address is one of the address checks, as nginx's http-level deny is: a client in it with good credentials passes.`,
}, parseOneOf("any", "all"))

func satisfyKeys() []*definition { return []*definition{Satisfy.def} }

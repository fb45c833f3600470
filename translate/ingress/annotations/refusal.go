package annotations

// Fail closed. An annotation that guards access (who may reach a path,
// what a request may carry) or that carries free-form nginx configuration
// (which can hold such a rule) must never be silently dropped: an Ingress
// that relies on it would be served wide open. So, for such a key, an
// Ingress carrying it is refused (not served; the front-end decides how,
// translate/ingress/refuse.go) when:
//
//   - the key has a definition whose verdict is Refused, or
//   - it is an ingress-nginx key of accessControls that has no definition
//     yet (a key nobody honours), or
//   - its value does not parse and its definition is an access control:
//     a broken allow-list must not become no allow-list.
//
// The list below is the only place that says which keys guard access; a
// group that honours one of them only adds its definition to the table,
// and the key stops refusing as soon as it is there.

// accessControls maps each ingress-nginx key (by its name in the catalogue)
// that can restrict who gets in, or that carries free-form configuration,
// to why ignoring it would open a door. Conservative on purpose: a key is
// here when dropping it could serve a request its author meant to refuse.
func accessControls() map[string]string {
	const (
		snippet = "it carries free-form nginx configuration, which may hold access rules (deny, auth_request, return, if) that ingress-xds cannot apply"
		waf     = "ModSecurity is a web application firewall that ingress-xds does not run: requests it would block would be served"
		ipRange = "it restricts which client addresses may reach the paths"
		basic   = "it is part of basic authentication, without which the paths would be served to anyone"
		extAuth = "it is part of external authentication (auth_request), without which the paths would be served to anyone"
		mtls    = "it is part of client certificate verification, without which clients without a valid certificate would be served"
		limits  = "it limits how much each client may ask, a protection the paths would be served without"
		cors    = "it restricts which web origins may read the responses, a restriction browsers would no longer be told of"
	)
	return map[string]string{
		"configuration-snippet":      snippet,
		"server-snippet":             snippet,
		"stream-snippet":             snippet,
		"auth-snippet":               snippet,
		"modsecurity-snippet":        snippet,
		"enable-modsecurity":         waf,
		"enable-owasp-core-rules":    waf,
		"modsecurity-transaction-id": waf,

		"allowlist-source-range": ipRange,
		"denylist-source-range":  ipRange,

		"auth-type":        basic,
		"auth-secret":      basic,
		"auth-secret-type": basic,

		"auth-url":    extAuth,
		"auth-method": extAuth,
		// Without it a client's own value of those headers would reach a
		// backend that trusts them to name the authenticated user.
		"auth-response-headers":  extAuth + "; a client's own value of the headers it names would reach the backend",
		"auth-proxy-set-headers": extAuth,

		"auth-tls-secret":        mtls,
		"auth-tls-verify-client": mtls,
		"auth-tls-verify-depth":  mtls,
		"auth-tls-match-cn":      mtls,

		"limit-rps":              limits,
		"limit-rpm":              limits,
		"limit-connections":      limits,
		"limit-burst-multiplier": limits,
		"limit-rate":             limits,
		"limit-rate-after":       limits,

		"cors-allow-origin":      cors,
		"cors-allow-methods":     cors,
		"cors-allow-headers":     cors,
		"cors-allow-credentials": cors,
		"cors-expose-headers":    cors,
	}
}

// ReasonUnsupportedAccess is the Reason of an issue that refuses for a key
// ingress-xds does not apply at all (no definition, or a definition whose
// verdict is Refused), which serve --unsupported-annotations=ignore lets an
// operator serve without; an access control's value that does not parse is
// an InvalidAnnotation that refuses whatever the flag.
const ReasonUnsupportedAccess = "RefusedAnnotation"

// refusal says why a key refuses an Ingress that carries it, whatever its
// value ("" when it does not): name is the key without prefix, def its
// definition (nil when the table has none), nginx whether it was read under
// ingress-nginx's prefix.
func (r *Registry) refusal(name string, def *definition, nginx bool) string {
	if def != nil {
		if def.verdictOrDefault() == Refused {
			return def.note
		}
		return ""
	}
	if !nginx {
		return ""
	}
	return r.access[r.catalogue[name].name]
}

// invalidRefuses says why a value of def that does not parse refuses the
// Ingress ("" when it is only ignored): the key is an access control.
func (r *Registry) invalidRefuses(def *definition) string {
	if why := r.access[def.name]; why != "" {
		return why
	}
	for _, a := range def.aliases {
		if why := r.access[a]; why != "" {
			return why
		}
	}
	return ""
}

// AccessControl reports whether a key (ingress-nginx's name, without
// prefix) guards access, and why: for the docs and for tests.
func (r *Registry) AccessControl(name string) (string, bool) {
	why, ok := r.access[r.catalogue[name].name]
	return why, ok
}

package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// parseConnectionLimit reads limit-connections (nil: none): nginx's
// limit_conn <zone> N, whose zone is the Ingress's (ingress-nginx names it
// <namespace>_<name>_<uid>_conn, shared by all the Ingress's locations),
// keyed by the client's address, with limit-allowlist's clients left out
// (their key is empty, which nginx does not count). "0" is no limit. A
// value that does not parse is already a refusal (annotations/refusal.go).
func parseConnectionLimit(values *annotations.Values, env groupEnv) *ir.ConnectionLimit {
	n, _ := annotations.LimitConnections.Get(values)
	if n <= 0 {
		return nil
	}
	// A limit-allowlist that does not parse is reported and leaves
	// everyone counted: the safer way to be wrong.
	exempt, _ := annotations.LimitAllowlist.Get(values)
	return &ir.ConnectionLimit{
		Max:    uint32(min(uint64(n), 1<<32-1)),
		Zone:   env.ing.Namespace + "/" + env.ing.Name,
		Exempt: exempt,
		Status: env.opts.config.limitConnStatus(), // limit-conn-status-code
	}
}

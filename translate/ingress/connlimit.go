package ingress

import (
	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// connectionLimitAnnotations reads limit-connections into p: nginx's
// limit_conn <zone> N, whose zone is the Ingress's (ingress-nginx names it
// <namespace>_<name>_<uid>_conn, shared by all the Ingress's locations),
// keyed by the client's address, with limit-allowlist's clients left out
// (their key is empty, which nginx does not count). "0" is no limit. A
// value that does not parse is already a refusal (annotations/refusal.go).
func (f *fragmentBuilder) connectionLimitAnnotations(values *annotations.Values, p *ir.RoutePolicy) {
	n, _ := annotations.LimitConnections.Get(values)
	if n <= 0 {
		return
	}
	// A limit-allowlist that does not parse is reported and leaves
	// everyone counted: the safer way to be wrong.
	exempt, _ := annotations.LimitAllowlist.Get(values)
	p.Connections = &ir.ConnectionLimit{
		Max:    uint32(min(uint64(n), 1<<32-1)),
		Zone:   f.ing.Namespace + "/" + f.ing.Name,
		Exempt: exempt,
		Status: f.opts.config.limitConnStatus(), // limit-conn-status-code
	}
}

package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// The kinds problems are reported on.
const (
	kindGateway   = "Gateway"
	kindHTTPRoute = "HTTPRoute"
)

// problems collects what is wrong with the objects, once each.
type problems struct {
	list []ir.Problem
	seen map[ir.Problem]bool
}

func (p *problems) add(kind, namespace, name, reason, format string, args ...any) {
	pr := ir.Problem{Kind: kind, Namespace: namespace, Name: name, Reason: reason, Message: fmt.Sprintf(format, args...)}
	if p.seen == nil {
		p.seen = map[ir.Problem]bool{}
	}
	if p.seen[pr] {
		return
	}
	p.seen[pr] = true
	p.list = append(p.list, pr)
}

// drop forgets the problems of one object.
func (p *problems) drop(kind, namespace, name string) {
	p.list = slices.DeleteFunc(p.list, func(pr ir.Problem) bool {
		if pr.Kind != kind || pr.Namespace != namespace || pr.Name != name {
			return false
		}
		delete(p.seen, pr)
		return true
	})
}

// sorted is the problems by object, then message, as the IR wants them.
func (p *problems) sorted() []ir.Problem {
	out := slices.Clone(p.list)
	slices.SortFunc(out, func(a, b ir.Problem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Message, b.Message), cmp.Compare(a.Reason, b.Reason))
	})
	if out == nil {
		out = []ir.Problem{}
	}
	return out
}

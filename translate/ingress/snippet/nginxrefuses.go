package snippet

import (
	"errors"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/nginxconf"
)

// maxRescans bounds how many refused directives nginxRefusesToo sets
// aside while it looks for one that nginx itself refuses, and
// rescanDirectives the directives it translates again in all, so that a
// long refused snippet costs a few translations of it at most.
const (
	maxRescans       = 32
	rescanDirectives = 4096
)

// nginxRefuses says whether a refusal is of something nginx itself
// refuses, so that the snippet never ran under ingress-nginx either.
func (r *Refusal) nginxRefuses() bool {
	return strings.Contains(r.Why, "nginx refuses") || strings.HasPrefix(r.Why, "not nginx syntax")
}

// nginxRefusesToo looks past the first refusal of ds, of what ingress-xds
// does not translate, for a directive further on that nginx itself
// refuses: nginx checks the whole configuration before it runs any of it,
// so such a snippet never ran under ingress-nginx, which is what its user
// most needs to hear. It translates the snippet again without each
// refused directive in turn, looking into a refused location's block as
// nginx reads it (the variables the directives set aside name count as
// declared, as they may have set them), and returns the first refusal
// that is nginx's, or nil when there is none.
func nginxRefusesToo(ds []nginxconf.Directive, lv level, opts Options) *Refusal {
	budget := min(maxRescans, max(1, rescanDirectives/count(ds)))
	return rescan(ds, lv, opts, declared(ds), &budget)
}

// count is the number of directives of ds, blocks' included.
func count(ds []nginxconf.Directive) int {
	n := len(ds)
	for _, d := range ds {
		n += count(d.Block)
	}
	return n
}

func rescan(ds []nginxconf.Directive, lv level, opts Options, declared map[string]bool, budget *int) *Refusal {
	for ; *budget > 0; *budget-- {
		t := &translator{declared: declared, opts: opts}
		res, err := t.block(ds, lv, nil)
		if err == nil && lv != snippetLocation {
			err = t.again(ds, res.Branches)
		}
		var r *Refusal
		if !errors.As(err, &r) {
			return nil
		}
		if r.nginxRefuses() {
			return r
		}
		var removed *nginxconf.Directive
		ds, removed = without(ds, r.Line, r.Directive)
		if removed == nil {
			return nil
		}
		mentioned(*removed, declared)
		if removed.Name == "location" && len(removed.Block) > 0 {
			*budget--
			if n := rescan(removed.Block, snippetLocation, opts, declared, budget); n != nil {
				return n
			}
		}
	}
	return nil
}

// without is ds without the first directive named name on line, at any
// depth, and that directive (nil when there is none).
func without(ds []nginxconf.Directive, line int, name string) ([]nginxconf.Directive, *nginxconf.Directive) {
	for i, d := range ds {
		if d.Line == line && d.Name == name {
			out := append(append([]nginxconf.Directive{}, ds[:i]...), ds[i+1:]...)
			return out, &d
		}
		if d.Block == nil {
			continue
		}
		if block, removed := without(d.Block, line, name); removed != nil {
			out := append([]nginxconf.Directive{}, ds...)
			out[i].Block = block
			return out, removed
		}
	}
	return ds, nil
}

// mentioned adds the variables d and its block name to vars.
func mentioned(d nginxconf.Directive, vars map[string]bool) {
	for _, a := range d.Args {
		ps, err := pieces(strings.Trim(a, "()"))
		if err != nil {
			continue
		}
		for _, p := range ps {
			if p.name != "" {
				vars[p.name] = true
			}
		}
	}
	for _, b := range d.Block {
		mentioned(b, vars)
	}
}

package ingress

import (
	"fmt"
	"regexp"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// A configuration-snippet's rewrite ... last to a literal path makes nginx
// choose the location again for that path, among every location of the
// server, whichever Ingress made it. Envoy routes a request once, so the
// choice is made here, once the host's routes are all known: the snippet's
// variant route (made by snippetVariants as a forward with the new path)
// stays where the location chosen is its own, takes the action and policy
// of the location chosen otherwise, and answers 503 (reported) where the
// choice cannot be made here as nginx makes it.

// snippetReselects are the rewrite ... last targets of route's variants
// (and of route itself, where a branch takes every request), by the
// variant's conditions (reselectKey): the routes are copied by the host's
// merge (regex mode, server snippets), their conditions kept.
func snippetReselects(route *ir.Route, loc *snippet.Result) map[string]snippet.Reselect {
	if loc == nil || route.Action.Forward == nil {
		return nil
	}
	var out map[string]snippet.Reselect
	for _, b := range loc.Branches {
		if b.Outcome.Reselect == nil {
			continue
		}
		if out == nil {
			out = map[string]snippet.Reselect{}
		}
		headers := route.Match.Headers
		if len(b.When) > 0 {
			headers = append(append([]ir.HeaderMatch(nil), route.Match.Headers...), b.When...)
		}
		out[reselectKey(headers)] = *b.Outcome.Reselect
	}
	return out
}

// reselectKey identifies a variant among its Ingress's by its conditions.
func reselectKey(headers []ir.HeaderMatch) string { return fmt.Sprintf("%+v", headers) }

// locationKey is a location of the host: the path a route matches, its
// conditions aside (a location's variants share it).
type locationKey struct {
	pathType ir.PathType
	path     string
}

// resolveReselects makes each rewrite ... last variant of the host's routes
// what nginx does with its request.
func (out *hostMerge) resolveReselects(kept []hostRoute) {
	if out.vhost == nil {
		return
	}
	type owner struct{ namespace, name string }
	targets := map[owner]map[string]snippet.Reselect{}
	ingresses := map[owner]*networkingv1.Ingress{}
	for _, hr := range kept {
		if len(hr.reselects) == 0 {
			continue
		}
		o := owner{hr.ingress.Namespace, hr.ingress.Name}
		ingresses[o] = hr.ingress
		if targets[o] == nil {
			targets[o] = map[string]snippet.Reselect{}
		}
		for k, r := range hr.reselects {
			targets[o][k] = r
		}
	}
	if len(targets) == 0 {
		return
	}
	reported := map[string]bool{}
	routes := out.vhost.Routes
	for i, v := range routes {
		if v.Source == nil || v.Source.Kind != "Ingress" || v.Action.Forward == nil {
			continue
		}
		o := owner{v.Source.Namespace, v.Source.Name}
		r, ok := targets[o][reselectKey(v.Match.Headers)]
		if !ok {
			continue
		}
		resolved, why := reselect(routes, v, r.Path)
		if why == "" {
			routes[i] = resolved
			continue
		}
		c := *v
		c.Policy = nil
		c.Action = ir.Action{Direct: &ir.DirectResponse{Status: 503, Body: refusedBody}}
		routes[i] = &c
		msg := fmt.Sprintf("annotation configuration-snippet: directive %s (line %d): on host %q, %s: not translated; the requests it rewrites answer 503",
			r.Directive, r.Line, out.vhost.Host, why)
		if !reported[o.namespace+"/"+o.name+"\x00"+msg] {
			reported[o.namespace+"/"+o.name+"\x00"+msg] = true
			out.problems = append(out.problems, newProblem(ingresses[o], "SnippetRewriteRefused", "%s", msg))
		}
	}
}

// reselect is variant v of a location as nginx makes it once it has
// chosen the location again for path among the host's routes, or why that
// choice is not made here. nginx's choice (ngx_http_core_module's
// location): an exact location of the path; else the first regular
// expression, in the order the routes keep for Envoy, that takes it; else
// the longest prefix. The location chosen must then simply forward: its
// own rewrite phase (a snippet of another Ingress, its rewrite-target)
// would run on the new path.
func reselect(routes []*ir.Route, v *ir.Route, path string) (*ir.Route, string) {
	var chosen []locationKey
	byLocation := map[locationKey][]*ir.Route{}
	for _, r := range routes {
		if !takesPath(r.Match, path) {
			continue
		}
		k := locationKey{r.Match.PathType, r.Match.Path}
		if _, ok := byLocation[k]; !ok {
			chosen = append(chosen, k)
		}
		byLocation[k] = append(byLocation[k], r)
	}
	if len(chosen) == 0 {
		return nil, fmt.Sprintf("no path of the host takes %s", path)
	}
	rank := func(k locationKey) int {
		switch k.pathType {
		case ir.PathExact:
			return 3
		case ir.PathRegex:
			return 2
		}
		return 1
	}
	best := chosen[0]
	for _, k := range chosen[1:] {
		switch {
		case rank(k) > rank(best):
			best = k
		case k.pathType == ir.PathPrefix && best.pathType == ir.PathPrefix && len(k.path) > len(best.path):
			best = k
		}
	}
	chosen = []locationKey{best}
	k := chosen[0]
	own := k == locationKey{v.Match.PathType, v.Match.Path}
	var main *ir.Route
	for _, r := range byLocation[k] {
		plain := len(r.Match.Headers) == 0 && len(r.Match.Query) == 0
		switch {
		case plain && main == nil:
			main = r
		case !own && !sameSource(r, v):
			// A route of another Ingress's snippet, a canary's, or the
			// server's: its conditions might hold for the new path. (In
			// its own location, the same snippet's variants were run
			// again on the path, and the server's answers come before
			// nginx chooses any location.)
			return nil, fmt.Sprintf("the %s path %s, which takes %s, has routes of conditions of its own", k.pathType, k.path, path)
		}
	}
	if main == nil || main.Action.Forward == nil {
		return nil, fmt.Sprintf("the %s path %s, which takes %s, does not simply forward it", k.pathType, k.path, path)
	}
	if p := main.Policy; p != nil && p.Rewrite != nil && (p.Rewrite.Prefix != "" || p.Rewrite.Regex != nil) {
		return nil, fmt.Sprintf("the %s path %s, which takes %s, rewrites it again (rewrite-target)", k.pathType, k.path, path)
	}
	if own || v.Policy == nil || v.Policy.Rewrite == nil {
		// Its own location, whose rewrite phase (the same snippet, run
		// again on path) forwards it: v as snippetVariants made it.
		return v, ""
	}
	// Another location: its action and policy, with the new path; the
	// same snippet's variants there do not hold for path (the snippet
	// was run again on it).
	c := *v
	c.Action = main.Action
	var p ir.RoutePolicy
	if main.Policy != nil {
		p = *main.Policy
	}
	rw := ir.Rewrite{Regex: v.Policy.Rewrite.Regex}
	if p.Rewrite != nil {
		rw.Host = p.Rewrite.Host
	}
	p.Rewrite = &rw
	c.Policy = &p
	c.Log = main.Log
	return &c, ""
}

// sameSource says whether two routes are of the same Ingress.
func sameSource(a, b *ir.Route) bool {
	return a.Source != nil && b.Source != nil && a.Source.Kind == b.Source.Kind && a.Source.Namespace == b.Source.Namespace && a.Source.Name == b.Source.Name
}

// takesPath says whether a route's path match takes path (its conditions
// aside).
func takesPath(m ir.Match, path string) bool {
	switch m.PathType {
	case ir.PathExact:
		return m.Path == path
	case ir.PathPrefix:
		return m.Path == "/" || path == m.Path || strings.HasPrefix(path, m.Path+"/")
	case ir.PathRegex:
		re, err := regexp.Compile("^(?:" + m.Path + ")$")
		// An expression Go's RE2 cannot read is taken to take the path,
		// so that the choice is not made here.
		return err != nil || re.MatchString(path)
	}
	return true
}

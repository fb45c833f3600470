package ingress

import (
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/snippet"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// mergeServerSnippet applies to host the server-snippet of the oldest
// Ingress that routes it and has one, as ingress-nginx writes one
// server-snippet per host, the oldest Ingress's (a younger one's is
// reported). In nginx it is server-level configuration, so it concerns
// every path of the host, whichever Ingress serves it:
//
//   - its rewrite-phase answers (return, a redirecting rewrite, under
//     their if conditions) run in the server-rewrite phase, before any
//     location is chosen: routes matching every path, first of all;
//   - its headers-more directives are inherited by every location, before
//     the location's own (which win for the same name); its add_header
//     only by the locations without one of their own; its allow and deny
//     only by the locations without rules of their own;
//   - its location blocks are placed where nginx's selection puts them
//     among the generated locations: an exact one before all, regular
//     expressions after the exact ones and before every prefix (the
//     annotation's server-snippet precedes the generated locations), a
//     prefix one by its length among the prefixes.
//
// The ConfigMap's server-snippet (config) then applies to every host, as
// nginx writes it in every server after the locations: its answers after
// the annotation's, its regular expression locations, on a host in
// regex mode, after the generated ones.
//
// It returns the server's gzip directives, the annotation's over the
// ConfigMap's (gzip.go).
func (out *hostMerge) mergeServerSnippet(host string, frags []*fragment, regexMode bool, config *snippet.Result) snippet.Gzip {
	front := 0
	var gzip snippet.Gzip
	if first := out.oldestServerSnippet(host, frags); first != nil && out.vhost != nil {
		gzip = first.serverSnippet.Gzip
		src := &ir.Object{Kind: "Ingress", Namespace: first.ingress.Namespace, Name: first.ingress.Name}
		if len(first.routes) > 0 {
			src = first.routes[0].route.Source
		}
		front = out.applyServerSnippet(first.serverSnippet, src, first, regexMode, 0)
	}
	if config != nil && out.vhost != nil {
		out.applyServerSnippet(config, &ir.Object{Kind: "ConfigMap", Name: "server-snippet"}, nil, regexMode, front)
		gzip = gzip.Under(config.Gzip)
	}
	return gzip
}

// oldestServerSnippet is the oldest fragment of host with a
// server-snippet; the younger ones are reported.
func (out *hostMerge) oldestServerSnippet(host string, frags []*fragment) *fragment {
	var first *fragment
	for _, f := range frags {
		if f.serverSnippet == nil || !slices.ContainsFunc(f.routes, func(hr hostRoute) bool { return hr.host == host }) {
			continue
		}
		if first == nil {
			first = f
			continue
		}
		out.problems = append(out.problems, newProblem(f.ingress, "ServerSnippetConflict",
			"annotation server-snippet: host %q already has the server-snippet of the older Ingress %s/%s, as ingress-nginx takes one per host: ignored",
			host, first.ingress.Namespace, first.ingress.Name))
	}
	return first
}

// applyServerSnippet applies s to the host's routes, its answers after the
// first after routes (another snippet's answers), and says how many
// routes are answers now at the front. owner is the Ingress whose
// snippet it is (nil: the ConfigMap's), for problems.
func (out *hostMerge) applyServerSnippet(s *snippet.Result, src *ir.Object, owner *fragment, regexMode bool, after int) int {
	report := func(reason, format string, args ...any) {
		if owner != nil {
			out.problems = append(out.problems, newProblem(owner.ingress, reason, "annotation server-snippet: "+format, args...))
		}
	}
	// The server's edits and rules, inherited by every route.
	if !s.Edits.Empty() || s.Access != nil || s.NoAccessLog || s.LimitReqStatus != 0 || s.LimitConnStatus != 0 {
		for i, r := range out.vhost.Routes {
			out.vhost.Routes[i] = inheritServer(r, s)
		}
	}
	var front, exact, regex []*ir.Route
	for _, b := range s.Branches {
		r := &ir.Route{Match: ir.Match{PathType: ir.PathPrefix, Path: "/", Headers: b.When}, Source: src}
		r.Policy = answerPolicy(serverPolicy(s, nil))
		applyOutcome(r, b.Outcome)
		if r.Action.Forward == nil && r.Action.Redirect == nil && r.Action.Direct == nil {
			continue
		}
		front = append(front, r)
	}
	var prefixes []*ir.Route
	for _, l := range s.Locations {
		routes := locationRoutes(l, s, src)
		switch l.Modifier {
		case "=":
			if slices.ContainsFunc(out.vhost.Routes, func(r *ir.Route) bool {
				return r.Match.PathType == ir.PathExact && r.Match.Path == l.Path && len(r.Match.Headers) == 0
			}) || slices.ContainsFunc(out.vhost.Routes, func(r *ir.Route) bool {
				return !regexMode && r.Match.PathType == ir.PathPrefix && r.Match.Path == l.Path
			}) {
				report("ServerSnippetConflict", "location = %s (line %d) duplicates the location of an Ingress path, which nginx refuses: ignored", l.Path, l.Line)
				continue
			}
			exact = append(exact, routes...)
		case "~", "~*":
			regex = append(regex, routes...)
		default:
			if regexMode {
				report("ServerSnippetBypassed", "location %s (line %d) is never chosen on host %q, whose paths are regular expressions (use-regex or rewrite-target): nginx's regex locations take every request first, so it is left out, as nginx bypasses it", l.Raw, l.Line, out.vhost.Host)
				continue
			}
			prefixes = append(prefixes, routes...)
		}
	}
	rest := out.vhost.Routes
	routes := slices.Concat(rest[:after], front, exact)
	rest = rest[after:]
	i := 0
	for i < len(rest) && rest[i].Match.PathType == ir.PathExact {
		i++
	}
	routes = append(routes, rest[:i]...)
	if owner == nil && regexMode {
		// The ConfigMap's regexes come after the generated ones.
		routes = append(routes, insertPrefixes(rest[i:], prefixes)...)
		routes = append(routes, regex...)
	} else {
		routes = append(routes, regex...)
		routes = append(routes, insertPrefixes(rest[i:], prefixes)...)
	}
	out.vhost.Routes = routes
	return after + len(front)
}

// insertPrefixes places prefix-location routes among routes (the host's
// prefix routes, longest first) by nginx's longest-prefix rule: a
// generated Prefix path /p is nginx's location /p/ (and = /p), so it ranks
// as len(/p/).
func insertPrefixes(routes, prefixes []*ir.Route) []*ir.Route {
	if len(prefixes) == 0 {
		return routes
	}
	rank := func(r *ir.Route) int {
		switch {
		case r.Match.PathType == ir.PathPrefix && r.Match.Path == "/":
			return 1
		case r.Match.PathType == ir.PathPrefix:
			return len(r.Match.Path) + 1
		case r.Match.PathType == ir.PathRegex && strings.HasPrefix(r.Match.Path, "^"):
			// A snippet prefix location's.
			return len(regexpLiteralPrefix(r.Match.Path))
		}
		return 1 << 30 // other regexes keep their place first
	}
	out := slices.Clone(routes)
	for _, p := range prefixes {
		at := len(out)
		for j, r := range out {
			if rank(r) < rank(p) {
				at = j
				break
			}
		}
		out = slices.Insert(out, at, p)
	}
	return out
}

// regexpLiteralPrefix is the literal prefix of a prefix location's
// expression ("^" + the quoted prefix).
func regexpLiteralPrefix(re string) string {
	p, _ := regexp.MustCompile(strings.TrimPrefix(re, "^")).LiteralPrefix()
	return p
}

// inheritServer is r with the server snippet's edits and rules under its
// own.
func inheritServer(r *ir.Route, s *snippet.Result) *ir.Route {
	c := *r
	c.Policy = serverPolicy(s, r.Policy)
	return &c
}

// serverPolicy is p (a location's policy; nil: none) under the server's
// edits and rules.
func serverPolicy(s *snippet.Result, p *ir.RoutePolicy) *ir.RoutePolicy {
	var c ir.RoutePolicy
	if p != nil {
		c = *p
	}
	srv := s.Edits.Response
	if c.ResponseHeaders != nil && (len(c.ResponseHeaders.Add) > 0 || len(c.ResponseHeaders.AddOnSuccess) > 0) {
		// The location has add_header of its own: the server's are not
		// inherited.
		srv.Add, srv.AddOnSuccess = nil, nil
	}
	c.ResponseHeaders = mergeHeaderChanges(&srv, c.ResponseHeaders)
	c.RequestHeaders = mergeHeaderChanges(&s.Edits.Request, c.RequestHeaders)
	if c.IPRules == nil && s.Access != nil {
		c.IPRules = s.Access
	}
	// access_log off at server level reaches every location: ingress-nginx's
	// write access_log only to turn it off (enable-access-log).
	c.NoAccessLog = c.NoAccessLog || s.NoAccessLog
	limitStatuses(&c, s)
	if reflectZero(&c) {
		return nil
	}
	return &c
}

func reflectZero(p *ir.RoutePolicy) bool { return reflect.ValueOf(*p).IsZero() }

// answerPolicy is the policy of a route that answers in nginx's rewrite
// phase: the headers, without the access rules, which nginx checks later
// (a return answers whoever asks).
func answerPolicy(p *ir.RoutePolicy) *ir.RoutePolicy {
	if p == nil || p.IPRules == nil {
		return p
	}
	c := *p
	c.IPRules = nil
	if reflectZero(&c) {
		return nil
	}
	return &c
}

// locationRoutes are the routes of a server snippet's location block: its
// branches, then its answer for every other request (or 403, for a
// location whose rules refuse every address and that answers nothing).
func locationRoutes(l snippet.Location, s *snippet.Result, src *ir.Object) []*ir.Route {
	var m ir.Match
	switch l.Modifier {
	case "=":
		m = ir.Match{PathType: ir.PathExact, Path: l.Path}
	case "~", "~*":
		m = ir.Match{PathType: ir.PathRegex, Path: l.Path}
	default:
		// nginx's prefix is a string's, not whole segments'.
		m = ir.Match{PathType: ir.PathRegex, Path: "^" + regexp.QuoteMeta(l.Path) + ".*"}
	}
	// The location inherits the server's edits and rules (the server's
	// rewrite phase ran before: its answers are the front routes).
	policy := serverPolicy(s, locationPolicy(&l.Result))
	var out []*ir.Route
	answered := false
	for _, b := range l.Branches {
		r := &ir.Route{Match: m, Source: src, Policy: policy}
		r.Match.Headers = b.When
		if b.Outcome.Edits != nil {
			r.Policy = serverPolicy(s, &ir.RoutePolicy{
				RequestHeaders:  mergeHeaderChanges(&b.Outcome.Edits.Request, nil),
				ResponseHeaders: mergeHeaderChanges(&b.Outcome.Edits.Response, nil),
				IPRules:         l.Access,
			})
		}
		applyOutcome(r, b.Outcome)
		if r.Action.Redirect == nil && r.Action.Direct == nil {
			continue
		}
		r.Policy = answerPolicy(r.Policy)
		if b.Outcome.Answers() && len(b.When) == 0 {
			answered = true
		}
		out = append(out, r)
	}
	if !answered {
		// Every address refused (snippet.location checked it).
		out = append(out, &ir.Route{Match: m, Source: src, Policy: policy, Action: ir.Action{Direct: &ir.DirectResponse{Status: 403}}})
	}
	return out
}

// locationPolicy is a snippet location's own edits and rules.
func locationPolicy(r *snippet.Result) *ir.RoutePolicy {
	p := &ir.RoutePolicy{IPRules: r.Access, NoAccessLog: r.NoAccessLog}
	p.RequestHeaders = mergeHeaderChanges(&r.Edits.Request, nil)
	p.ResponseHeaders = mergeHeaderChanges(&r.Edits.Response, nil)
	return p
}

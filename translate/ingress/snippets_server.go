package ingress

import (
	"fmt"
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
func (out *hostMerge) mergeServerSnippet(host string, frags []*fragment, regexMode bool, config *snippet.Result, blocked bool) snippet.Gzip {
	front := 0
	var gzip snippet.Gzip
	if first := out.oldestServerSnippet(host, frags); first != nil && out.vhost != nil && out.serverErrorPages(first, blocked) {
		out.refuseCookieFlagsUnder(host, frags, first.serverSnippet)
		gzip = first.serverSnippet.Gzip
		src := &ir.Object{Kind: "Ingress", Namespace: first.ingress.Namespace, Name: first.ingress.Name}
		if len(first.routes) > 0 {
			src = first.routes[0].route.Source
		}
		front = out.applyServerSnippet(first.serverSnippet, src, first, regexMode, 0)
	}
	if config != nil && out.vhost != nil {
		out.refuseCookieFlagsUnder(host, frags, config)
		out.applyServerSnippet(config, &ir.Object{Kind: "ConfigMap", Name: "server-snippet"}, nil, regexMode, front)
		gzip = gzip.Under(config.Gzip)
	}
	return gzip
}

// refuseCookieFlagsUnder refuses on the host the Ingresses whose
// configuration-snippet's proxy_cookie_flags would meet a Set-Cookie the
// server snippet s writes into their routes (more_set_headers, add_header
// always): nginx edits the backend's cookies alone, before headers-more
// and add_header, but Envoy's router writes the route's headers before
// the cookie filter sees the response. Their paths of the host answer
// 503 and the Ingress is told.
func (out *hostMerge) refuseCookieFlagsUnder(host string, frags []*fragment, s *snippet.Result) {
	if !setsCookie(&s.Edits.Response) {
		return
	}
	refused := map[ir.Object]bool{}
	for _, r := range out.vhost.Routes {
		if p := r.Policy; r.Source != nil && p != nil && p.ResponseRewrite != nil && len(p.ResponseRewrite.CookieFlags) > 0 &&
			setsCookie(serverPolicy(s, p).ResponseHeaders) {
			refused[*r.Source] = true
		}
	}
	if len(refused) == 0 {
		return
	}
	for i, r := range out.vhost.Routes {
		if r.Source == nil || !refused[*r.Source] {
			continue
		}
		c := *r
		c.Policy = nil
		c.Action = ir.Action{Direct: &ir.DirectResponse{Status: 503, Body: refusedBody}}
		out.vhost.Routes[i] = &c
	}
	for _, f := range frags {
		if refused[ir.Object{Kind: "Ingress", Namespace: f.ingress.Namespace, Name: f.ingress.Name}] && routesHost(f, host) {
			out.problems = append(out.problems, newProblem(f.ingress, "AnnotationRefused",
				"annotation configuration-snippet: directive proxy_cookie_flags: on host %q, a server-snippet writes a Set-Cookie into its responses, which nginx leaves as it is and Envoy's route would hand to the cookie filter: not translated (the Ingress's paths of the host answer 503)",
				host))
		}
	}
	out.clusters = usedClusters(out.clusters, out.vhost.Routes)
}

// serverErrorPages says whether the error_page directives of owner's
// server-snippet have no effect on the host, as while no path of it
// answers one of their codes itself; where one does, nginx would serve
// the error page there, which is not translated: the owner's paths of the
// host answer 503, the snippet left out, and the Ingress is told.
func (out *hostMerge) serverErrorPages(owner *fragment, blocked bool) bool {
	s := owner.serverSnippet
	if len(s.ErrorPages) == 0 {
		return true
	}
	ep, why := serverErrorPageAnswer(out.vhost.Routes, s, blocked)
	if why == "" {
		return true
	}
	for i, r := range out.vhost.Routes {
		if r.Source != nil && r.Source.Kind == "Ingress" && r.Source.Namespace == owner.ingress.Namespace && r.Source.Name == owner.ingress.Name {
			c := *r
			c.Policy = nil
			c.Action = ir.Action{Direct: &ir.DirectResponse{Status: 503, Body: refusedBody}}
			out.vhost.Routes[i] = &c
		}
	}
	out.problems = append(out.problems, newProblem(owner.ingress, "AnnotationRefused",
		"annotation server-snippet: directive %s (line %d): on host %q, %s, which nginx would replace with the error page: not translated (nothing of the snippet is applied; the Ingress's paths of the host answer 503)",
		ep.Directive, ep.Line, out.vhost.Host, why))
	return false
}

// serverErrorPageAnswer is the first of a server-snippet's error_page
// directives that would take a status a path of the host answers itself,
// and why; "" where none would. Every location without an error_page of
// its own inherits the server's (ngx_http_core_module), and nginx
// answers, besides what any proxying location answers, the statuses of
// the host's access rules, authentication, limits, redirects and returns,
// the snippet's own included. custom-http-errors (a location's own
// error_page, or the ConfigMap's at http level, which the server's would
// then replace) is not translated beside it.
func serverErrorPageAnswer(routes []*ir.Route, s *snippet.Result, blocked bool) (snippet.ErrorPage, string) {
	answers := map[int]string{
		400: "a malformed request", 408: "a client too slow to send its body", 413: "a body over the size limit",
		500: "an internal error", 502: "a backend that cannot be reached", 503: "no endpoint ready", 504: "a backend too slow to answer",
		495: "a client certificate refused", 496: "a client certificate missing",
	}
	add := func(code uint32, why string) {
		if _, ok := answers[int(code)]; !ok && code != 0 {
			answers[int(code)] = why
		}
	}
	if blocked {
		add(403, "block-user-agents or block-referers")
	}
	for _, r := range routes {
		switch a := r.Action; {
		case a.Direct != nil:
			add(a.Direct.Status, "a path's answer")
		case a.Redirect != nil:
			add(a.Redirect.Code, "a path's redirect")
		}
		p := r.Policy
		if p == nil {
			continue
		}
		if p.ErrorPages != nil {
			return s.ErrorPages[0], "custom-http-errors makes nginx intercept the backend's answers on a path"
		}
		if p.IPRules != nil {
			add(403, "allow and deny lists")
		}
		if p.Auth != nil && p.Auth.Basic != nil {
			add(401, "basic authentication")
		}
		if p.Auth != nil && p.Auth.External != nil {
			add(401, "auth-url")
			add(403, "auth-url")
		}
		if p.RateLimit != nil {
			add(p.RateLimit.Status, "a rate limit")
		}
		if p.Connections != nil {
			add(p.Connections.Status, "a connection limit")
		}
		if p.HTTPSRedirect != nil {
			add(p.HTTPSRedirect.Code, "the redirect to HTTPS")
		}
	}
	own := func(res *snippet.Result) {
		if res.Access != nil {
			add(403, "the snippet's allow and deny")
		}
		for _, b := range res.Branches {
			switch o := b.Outcome; {
			case o.Direct != nil:
				add(o.Direct.Status, "the snippet's return")
			case o.Redirect != nil:
				add(o.Redirect.Code, "the snippet's redirect")
			}
		}
	}
	own(s)
	for _, l := range s.Locations {
		own(&l.Result)
	}
	add(s.LimitReqStatus, "the snippet's limit status")
	add(s.LimitConnStatus, "the snippet's limit status")
	for _, ep := range s.ErrorPages {
		for _, c := range ep.Codes {
			if why, ok := answers[c]; ok {
				return ep, fmt.Sprintf("a path answers %d itself (%s)", c, why)
			}
		}
	}
	return snippet.ErrorPage{}, ""
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

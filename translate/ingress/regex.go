package ingress

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"

	"github.com/ingress-xds/ingress-xds/translate/ingress/annotations"
	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// ingress-nginx's regex mode, which Ingresses written for it rely on (its
// template's enforceRegexModifier, buildLocation and buildProxyPass, and its
// controller's updateServerLocations and location sort):
//   - when any location of a host uses a regular expression (use-regex) or
//     a rewrite (rewrite-target other than its path), every location of the
//     host, from every Ingress, becomes `~* "^<path>"`: a regular
//     expression, case-insensitive, anchored at the start only;
//   - a Prefix location without either is first split into "<path>/" and,
//     unless an Exact location of that path exists, an exact copy of
//     "<path>" (so in regex mode /foo also matches /foobar);
//   - locations are tried longest path first (ties: the greater string
//     first), and the first that matches wins;
//   - a rewrite replaces the whole path with the target, $1...$9 naming the
//     groups of the leftmost match of the path in it; the query string is
//     kept.

// rewriteIntent is what an Ingress's annotations ask of its paths.
type rewriteIntent struct {
	useRegex        bool
	target          string // rewrite-target; empty: none
	forwardedPrefix string // x-forwarded-prefix, sent with rewritten requests
}

// nginxPath is a route as ingress-nginx sees it, kept for the merge.
type nginxPath struct {
	raw   string // the path as written ("/" when empty)
	exact bool
	// regex is set when the location uses a regular expression or a
	// rewrite: it puts the host in regex mode, and its route is already in
	// regex form.
	regex bool
}

// parseRewrite reads the rewrite keys.
func parseRewrite(values *annotations.Values) rewriteIntent {
	var r rewriteIntent
	r.useRegex, _ = annotations.UseRegex.Get(values)
	r.target, _ = annotations.RewriteTarget.Get(values)
	r.forwardedPrefix, _ = annotations.XForwardedPrefix.Get(values)
	return r
}

// regexRoute makes the route of a location that uses a regular expression
// or a rewrite, or reports false when it does not (the route is then a
// plain one) or when the path cannot be one (with a problem).
func (f *fragmentBuilder) regexRoute(raw string, where location) (*ir.Route, bool, bool) {
	rewrites := f.rewrite.target != "" && f.rewrite.target != raw
	if !f.rewrite.useRegex && !rewrites {
		return nil, false, true
	}
	if len(raw) > MaxPathLength || !strings.HasPrefix(raw, "/") || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
		f.problem("InvalidPath", "%s: path %q is not a usable regular expression path (it must start with '/', hold no spaces or control characters, and be at most %d bytes): path ignored", where, raw, MaxPathLength)
		return nil, true, false
	}
	match, err := locationRegex(raw)
	if err != nil {
		f.problem("InvalidPath", "%s: path %q: %v: path ignored", where, raw, err)
		return nil, true, false
	}
	route := &ir.Route{
		Match:  ir.Match{PathType: ir.PathRegex, Path: match},
		Policy: f.policy,
		Source: f.source(),
	}
	if rewrites {
		pattern, err := rewriteRegex(raw)
		if err != nil {
			f.problem("InvalidPath", "%s: path %q: %v: path ignored", where, raw, err)
			return nil, true, false
		}
		p := ir.RoutePolicy{}
		if f.policy != nil {
			p = *f.policy
		}
		rw := ir.Rewrite{}
		if p.Rewrite != nil {
			rw = *p.Rewrite // upstream-vhost's Host
		}
		rw.Regex = &ir.RegexRewrite{Pattern: pattern, Substitution: substitution(f.rewrite.target)}
		p.Rewrite = &rw
		if f.rewrite.forwardedPrefix != "" {
			headers := ir.HeaderChanges{}
			if p.RequestHeaders != nil {
				headers = *p.RequestHeaders
			}
			headers.Set = append(append([]ir.Header(nil), headers.Set...), ir.Header{Name: "X-Forwarded-Prefix", Value: f.rewrite.forwardedPrefix})
			p.RequestHeaders = &headers
		}
		route.Policy = &p
	}
	return route, true, true
}

// locationRegex is `~* "^<path>"` as Envoy's whole-path match: the path is
// RE2 (Envoy's syntax), case-insensitive, followed by anything.
func locationRegex(path string) (string, error) {
	if out, ok, err := literalRegex(path, "(?i)(?:"+path+").*"); ok { // regex_literal.go
		return out, err
	}
	re, err := syntax.Parse(path, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("not a regular expression RE2 accepts: %w", err)
	}
	out := "(?i)(?:" + path + ").*"
	if re.Op == syntax.OpAlternate {
		// In `^a|b` the anchor binds to the first branch only: b may
		// match anywhere, as nginx searches the path.
		out = "(?i).*?(?:^" + path + ").*"
	}
	return checkRegex(out)
}

// rewriteRegex is nginx's `rewrite "(?i)<path>" <target>`, which replaces
// the whole path: the pattern covers all of it, and its leftmost match of
// the location's path.
func rewriteRegex(path string) (string, error) {
	if out, ok, err := literalRegex(path, "(?i)^(?:"+path+").*"); ok {
		return out, err
	}
	re, err := syntax.Parse(path, syntax.Perl)
	if err != nil {
		return "", fmt.Errorf("not a regular expression RE2 accepts: %w", err)
	}
	out := "(?i)^(?:" + path + ").*"
	if re.Op == syntax.OpAlternate {
		out = "(?i)^.*?(?:" + path + ").*"
	}
	return checkRegex(out)
}

func checkRegex(expr string) (string, error) {
	if len(expr) > ir.MaxRegexLength {
		return "", fmt.Errorf("the expression is over %d bytes", ir.MaxRegexLength)
	}
	if _, err := regexp.Compile(expr); err != nil {
		return "", fmt.Errorf("not a regular expression RE2 accepts: %w", err)
	}
	return expr, nil
}

// substitution turns nginx's $1...$9 into RE2's \1...\9 (the annotation's
// parser admits nothing else after a $).
func substitution(target string) string {
	return captureRef.ReplaceAllString(target, `\$1`)
}

var captureRef = regexp.MustCompile(`\$([1-9])`)

// regexRoutes is a host's routes in regex mode, from its merged locations
// in order (oldest Ingress first). Routes that cannot be a regular
// expression are left out, with a problem.
func regexRoutes(kept []hostRoute) ([]*ir.Route, []ir.Problem) {
	exact := map[string]bool{}
	for _, hr := range kept {
		if hr.nginx.exact {
			exact[hr.nginx.raw] = true
		}
	}
	type location struct {
		path  string
		route *ir.Route
	}
	var locations []location
	var problems []ir.Problem
	add := func(hr hostRoute, path string) {
		match, err := locationRegex(path)
		if err != nil {
			problems = append(problems, newProblem(hr.ingress, "InvalidPath", "%s: path %q on host %q, whose paths are regular expressions (an Ingress of the host uses use-regex or rewrite-target): %v: path ignored", hr.where, path, hr.host, err))
			return
		}
		for _, route := range append(slices.Clone(hr.variants), hr.route) {
			r := *route
			// Header and query matches stay (a canary's routes and a
			// snippet's variants have them).
			r.Match = ir.Match{PathType: ir.PathRegex, Path: match, Headers: route.Match.Headers, Query: route.Match.Query}
			locations = append(locations, location{path: path, route: &r})
		}
	}
	for _, hr := range kept {
		switch raw := hr.nginx.raw; {
		case hr.nginx.regex:
			for _, route := range append(slices.Clone(hr.variants), hr.route) {
				locations = append(locations, location{path: raw, route: route})
			}
		case hr.nginx.exact || raw == "/":
			add(hr, raw)
		default:
			add(hr, strings.TrimSuffix(raw, "/")+"/")
			if !exact[raw] {
				add(hr, raw)
			}
		}
	}
	sort.SliceStable(locations, func(i, j int) bool { return locations[i].path > locations[j].path })
	sort.SliceStable(locations, func(i, j int) bool { return len(locations[i].path) > len(locations[j].path) })
	out := make([]*ir.Route, len(locations))
	for i, l := range locations {
		out[i] = l.route
	}
	return out, problems
}

package gatewayapi

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// methodHeader is the pseudo-header a method match is made on: the IR
// matches headers, and HTTP/2's :method is what Envoy gives every request,
// whatever its version.
const methodHeader = ":method"

// match turns an HTTPRouteMatch into the IR's, with the defaults the API
// server would have written (a PathPrefix of /, Exact values). An error
// says why the match cannot be applied.
func match(m gwapiv1.HTTPRouteMatch) (ir.Match, error) {
	out := ir.Match{PathType: ir.PathPrefix, Path: "/"}
	if p := m.Path; p != nil {
		value := deref(p.Value, "/")
		switch t := deref(p.Type, gwapiv1.PathMatchPathPrefix); t {
		case gwapiv1.PathMatchExact:
			if !strings.HasPrefix(value, "/") {
				return out, fmt.Errorf("path %q does not start with /", value)
			}
			out.PathType, out.Path = ir.PathExact, value
		case gwapiv1.PathMatchPathPrefix:
			if !strings.HasPrefix(value, "/") {
				return out, fmt.Errorf("path %q does not start with /", value)
			}
			// A trailing / is ignored: /abc/ matches /abc, /abc/ and
			// /abc/def, as the IR's Prefix does (whole segments).
			if trimmed := strings.TrimRight(value, "/"); trimmed != "" {
				value = trimmed
			} else {
				value = "/"
			}
			out.PathType, out.Path = ir.PathPrefix, value
		case gwapiv1.PathMatchRegularExpression:
			if _, err := regexp.Compile(value); err != nil {
				return out, fmt.Errorf("path regular expression %q: %w", value, err)
			}
			out.PathType, out.Path = ir.PathRegex, value
		default:
			return out, fmt.Errorf("path match type %s is not supported", t)
		}
	}
	if m.Method != nil {
		out.Headers = append(out.Headers, ir.HeaderMatch{Name: methodHeader, Value: ir.StringMatch{Exact: string(*m.Method)}})
	}
	// Of several matches of one name, only the first counts (headers by
	// any case, query parameters exactly).
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue
		}
		seen[name] = true
		v, err := stringMatch(deref(h.Type, gwapiv1.HeaderMatchExact) == gwapiv1.HeaderMatchRegularExpression, h.Value)
		if err != nil {
			return out, fmt.Errorf("header %s: %w", h.Name, err)
		}
		out.Headers = append(out.Headers, ir.HeaderMatch{Name: name, Value: v})
	}
	seen = map[string]bool{}
	for _, q := range m.QueryParams {
		name := string(q.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		v, err := stringMatch(deref(q.Type, gwapiv1.QueryParamMatchExact) == gwapiv1.QueryParamMatchRegularExpression, q.Value)
		if err != nil {
			return out, fmt.Errorf("query parameter %s: %w", q.Name, err)
		}
		out.Query = append(out.Query, ir.QueryMatch{Name: name, Value: v})
	}
	return out, nil
}

// stringMatch is an exact or RE2 match of a whole value. An empty exact
// value (which the API server refuses) would read as "any value" in the
// IR, so it is an error here.
func stringMatch(regex bool, value string) (ir.StringMatch, error) {
	if value == "" {
		return ir.StringMatch{}, fmt.Errorf("empty value")
	}
	if !regex {
		return ir.StringMatch{Exact: value}, nil
	}
	if _, err := regexp.Compile(value); err != nil {
		return ir.StringMatch{}, fmt.Errorf("regular expression %q: %w", value, err)
	}
	return ir.StringMatch{Regex: value}, nil
}

// entry is one match of one rule of a Route, served on one host: the unit
// Gateway API's precedence orders.
type entry struct {
	route   *routeObject
	rule, m int
	match   ir.Match
	// method says an HTTPRoute match names a method; headers and queries
	// count the header and query matches that count.
	method  bool
	headers int
	queries int
	// service and method are the lengths of what a GRPCRoute match names.
	service, grpcMethod int
	irRoute             *ir.Route
	// key is entryKey's, made once.
	key string
}

// pathRank orders path types: Exact first, then regular expressions
// (whose place Gateway API leaves to implementations: before prefixes, as
// a regular expression is written to be precise), then prefixes.
func pathRank(t ir.PathType) int {
	switch t {
	case ir.PathExact:
		return 0
	case ir.PathRegex:
		return 1
	}
	return 2
}

// precedence orders a host's entries as Gateway API says, the first that
// matches a request winning: an Exact path, then the longest path; then a
// method match; then the most header matches; then the most query
// parameter matches; then the oldest Route, then the Route first by
// namespace/name; then the rule first in its Route, and the match first in
// its rule.
func precedence(a, b *entry) int {
	if a.route.kind != b.route.kind {
		// Gateway API merges no rules across the two kinds, and
		// oneKindPerHost leaves one kind per host of a listener; should
		// both meet, the HTTPRoutes' come first.
		if a.route.kind == kindHTTPRoute {
			return -1
		}
		return 1
	}
	if a.route.kind == kindGRPCRoute {
		return grpcPrecedence(a, b)
	}
	if c := cmp.Compare(pathRank(a.match.PathType), pathRank(b.match.PathType)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(b.match.Path), len(a.match.Path)); c != 0 {
		return c
	}
	if a.method != b.method {
		if a.method {
			return -1
		}
		return 1
	}
	if c := cmp.Or(cmp.Compare(b.headers, a.headers), cmp.Compare(b.queries, a.queries)); c != 0 {
		return c
	}
	if c := olderFirst(a.route, b.route); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.route.namespace, b.route.namespace), cmp.Compare(a.route.name, b.route.name),
		cmp.Compare(a.rule, b.rule), cmp.Compare(a.m, b.m))
}

// olderFirst orders Routes by creation time; one without (from a file)
// counts as the newest.
func olderFirst(a, b *routeObject) int {
	at, bt := a.created, b.created
	switch {
	case at.Equal(&bt):
		return 0
	case at.IsZero():
		return 1
	case bt.IsZero():
		return -1
	case at.Before(&bt):
		return -1
	}
	return 1
}

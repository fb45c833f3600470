package gatewayapi

import (
	"errors"
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// entries are a Route's IR routes, one per match of each rule (a rule
// without matches has one, of every path), before they are put in a host's
// order. A rule that cannot be applied as written answers 500, reported
// on the Route; its other rules are served.
func (b *build) entries(ro *routeObject, r *gwapiv1.HTTPRoute) []*entry {
	src := &ir.Object{Kind: ro.kind, Namespace: ro.namespace, Name: ro.name}
	var out []*entry
	for i, rule := range r.Spec.Rules {
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.HTTPRouteMatch{{}}
		}
		f, ferr := filters(rule.Filters)
		var shares []ir.WeightedCluster
		var invalid uint32
		if ferr == nil && f.redirect != nil && len(f.mirrors) > 0 {
			ferr = fmt.Errorf("a RequestMirror beside a RequestRedirect has nothing to copy")
		}
		if ferr == nil && f.redirect == nil {
			shares, invalid = b.shares(ro, i, rule.BackendRefs, nil, rule.Retry != nil)
			f.mirrored, ferr = b.mirrors(ro, f.mirrors, nil)
			var re refError
			if errors.As(ferr, &re) {
				b.unresolved(ro, reasonOf(ferr, string(gwapiv1.RouteReasonBackendNotFound)), fmt.Sprintf("rules[%d]: %v", i, ferr))
			}
		}
		if ferr == nil {
			f.retries, f.timeouts, ferr = retries(rule.Retry, rule.Timeouts)
		}
		if invalid > 0 && len(shares) > 0 {
			// The IR cannot answer a share of a route's requests with a
			// status: the valid shares take them all (docs/gateway-api.md).
			b.problem(ro, "PartlyResolved",
				"rules[%d]: the shares of unresolved backends go to the others until a share can be answered 500", i)
		}
		for j, m := range matches {
			where := fmt.Sprintf("rules[%d].matches[%d]", i, j)
			im, err := match(m)
			if err == nil {
				// A match Envoy would refuse (from a file).
				err = b.checkRoute(&ir.Route{Match: im, Action: ir.Action{Direct: &ir.DirectResponse{Status: 500}}})
			}
			if err != nil {
				// A match that cannot be said cannot be answered 500
				// either: widening it would take others' requests.
				b.problem(ro, "UnsupportedValue", "%s: %v: not served", where, err)
				continue
			}
			// The counts precedence compares are of the matches that
			// count: the first of each name.
			e := &entry{route: ro, rule: i, m: j, match: im, method: m.Method != nil, queries: len(im.Query)}
			e.headers = len(im.Headers)
			if e.method {
				e.headers--
			}
			out = append(out, b.finish(ro, src, e, f, shares, ferr, where))
		}
	}
	return out
}

// finish gives e its IR route: the rule's, or, where the rule's filters
// or backends (ferr) or the route itself cannot be applied as written,
// an answer of 500 for e's match, reported at where.
func (b *build) finish(ro *routeObject, src *ir.Object, e *entry, f applied, shares []ir.WeightedCluster, ferr error, where string) *entry {
	err := ferr
	var rt *ir.Route
	if err == nil {
		rt, err = route(e.match, f, shares)
	}
	if err == nil {
		// Values the API server would have refused (from a file).
		err = b.checkRoute(rt)
	}
	if err != nil {
		b.problem(ro, "UnsupportedValue", "%s: %v: answered 500", where, err)
		rt = &ir.Route{Match: e.match, Action: ir.Action{Direct: &ir.DirectResponse{Status: 500}}}
	}
	rt.Source = src
	e.irRoute = rt
	e.key = entryKey(e)
	return e
}

// route is one match's IR route: a redirect, or a forward to the rule's
// shares with its header changes and rewrite. No share at all (no
// backendRefs, every weight 0, every backend unresolved) answers 500, as
// Gateway API says.
func route(m ir.Match, f applied, shares []ir.WeightedCluster) (*ir.Route, error) {
	rt := &ir.Route{Match: m}
	p := &ir.RoutePolicy{RequestHeaders: f.requestHeaders, ResponseHeaders: f.responseHeaders, Timeouts: f.timeouts, CORS: f.cors}
	switch {
	case f.redirect != nil:
		rd, err := redirect(f.redirect, m)
		if err != nil {
			return nil, err
		}
		rt.Action.Redirect = rd
	case len(shares) == 0:
		rt.Action.Direct = &ir.DirectResponse{Status: 500}
	default:
		rt.Action.Forward = &ir.Forward{Clusters: shares}
		p.Mirrors = f.mirrored
		p.Retries = f.retries
		if f.rewrite != nil {
			rw, err := rewrite(f.rewrite, m)
			if err != nil {
				return nil, err
			}
			p.Rewrite = rw
		}
	}
	if p.RequestHeaders != nil || p.ResponseHeaders != nil || p.Rewrite != nil || p.Timeouts != nil || p.Retries != nil || len(p.Mirrors) > 0 || p.CORS != nil {
		rt.Policy = p
	}
	return rt, nil
}

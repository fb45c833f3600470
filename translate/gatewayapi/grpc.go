package gatewayapi

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-xds/ingress-xds/translate/ir"
)

// kindGRPCRoute is GRPCRoute's kind, for problems and status.
const kindGRPCRoute = "GRPCRoute"

// grpcBackends is the policy of a GRPCRoute's clusters: gRPC is HTTP/2,
// and a Service port behind a GRPCRoute speaks it in clear text (h2c)
// until backend TLS is supported.
func grpcBackends() *ir.ClusterPolicy { return &ir.ClusterPolicy{Protocol: ir.UpstreamHTTP2} }

func grpcRouteObject(r *gwapiv1.GRPCRoute) *routeObject {
	return &routeObject{kind: kindGRPCRoute, namespace: r.Namespace, name: r.Name, created: r.CreationTimestamp,
		generation: r.Generation, parentRefs: r.Spec.ParentRefs, hostnames: r.Spec.Hostnames}
}

// grpcEntries are a GRPCRoute's IR routes, one per match of each rule (a
// rule without matches has one, of every request), as entries does for
// an HTTPRoute: a gRPC method is a path (/service/method), so the same IR
// says it. A rule that cannot be applied as written answers 500; a match
// that cannot be said is not served.
func (b *build) grpcEntries(ro *routeObject, r *gwapiv1.GRPCRoute) []*entry {
	src := &ir.Object{Kind: ro.kind, Namespace: ro.namespace, Name: ro.name}
	var out []*entry
	for i, rule := range r.Spec.Rules {
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gwapiv1.GRPCRouteMatch{{}}
		}
		f, ferr := filters(httpFilters(rule.Filters))
		var shares []ir.WeightedCluster
		var invalid uint32
		if ferr == nil {
			refs := make([]gwapiv1.HTTPBackendRef, len(rule.BackendRefs))
			for k, ref := range rule.BackendRefs {
				refs[k] = gwapiv1.HTTPBackendRef{BackendRef: ref.BackendRef, Filters: httpFilters(ref.Filters)}
			}
			shares, invalid = b.shares(ro, i, refs, grpcBackends(), false)
			f.mirrored, ferr = b.mirrors(ro, f.mirrors, grpcBackends())
			var re refError
			if errors.As(ferr, &re) {
				b.unresolved(ro, re.reason, fmt.Sprintf("rules[%d]: %v", i, ferr))
			}
		}
		if invalid > 0 && len(shares) > 0 {
			b.problem(ro, "PartlyResolved",
				"rules[%d]: the shares of unresolved backends go to the others until a share can be answered 500", i)
		}
		for j, m := range matches {
			where := fmt.Sprintf("rules[%d].matches[%d]", i, j)
			im, service, method, err := grpcMatch(m)
			if err == nil {
				err = b.checkRoute(&ir.Route{Match: im, Action: ir.Action{Direct: &ir.DirectResponse{Status: 500}}})
			}
			if err != nil {
				b.problem(ro, "UnsupportedValue", "%s: %v: not served", where, err)
				continue
			}
			e := &entry{route: ro, rule: i, m: j, match: im, headers: len(im.Headers), service: service, grpcMethod: method}
			out = append(out, b.finish(ro, src, e, f, shares, ferr, where))
		}
	}
	return out
}

// httpFilters are GRPCRoute filters as the HTTPRoute filters of the same
// types (header modifiers and mirrors are the same objects); any other
// keeps its type, which filters refuses.
func httpFilters(fs []gwapiv1.GRPCRouteFilter) []gwapiv1.HTTPRouteFilter {
	out := make([]gwapiv1.HTTPRouteFilter, len(fs))
	for i, f := range fs {
		out[i] = gwapiv1.HTTPRouteFilter{Type: gwapiv1.HTTPRouteFilterType(f.Type), RequestHeaderModifier: f.RequestHeaderModifier,
			ResponseHeaderModifier: f.ResponseHeaderModifier, RequestMirror: f.RequestMirror, ExtensionRef: f.ExtensionRef}
	}
	return out
}

// grpcMatch is a GRPCRouteMatch as a path and header match, with the
// lengths of the service and method it names, which precedence compares.
// An exact service and method is the exact path /service/method; a
// service alone, every method of it; a method alone, that method of any
// service; regular expressions make one over the path, a missing part
// any one segment.
func grpcMatch(m gwapiv1.GRPCRouteMatch) (ir.Match, int, int, error) {
	out := ir.Match{PathType: ir.PathPrefix, Path: "/"}
	var service, method int
	if mm := m.Method; mm != nil {
		svc, meth := deref(mm.Service, ""), deref(mm.Method, "")
		service, method = len(svc), len(meth)
		switch t := deref(mm.Type, gwapiv1.GRPCMethodMatchExact); {
		case svc == "" && meth == "":
			return out, 0, 0, fmt.Errorf("a method match names neither service nor method")
		case t == gwapiv1.GRPCMethodMatchExact:
			if strings.Contains(svc, "/") || strings.Contains(meth, "/") {
				return out, 0, 0, fmt.Errorf("service %q or method %q holds a /", svc, meth)
			}
			switch {
			case meth == "":
				out = ir.Match{PathType: ir.PathPrefix, Path: "/" + svc}
			case svc == "":
				out = ir.Match{PathType: ir.PathRegex, Path: `/[^/]+/` + regexp.QuoteMeta(meth)}
			default:
				out = ir.Match{PathType: ir.PathExact, Path: "/" + svc + "/" + meth}
			}
		case t == gwapiv1.GRPCMethodMatchRegularExpression:
			for _, re := range []string{svc, meth} {
				if _, err := regexp.Compile(re); err != nil {
					return out, 0, 0, fmt.Errorf("method match regular expression %q: %w", re, err)
				}
			}
			out = ir.Match{PathType: ir.PathRegex, Path: "/" + cmp.Or(svc, `[^/]+`) + "/" + cmp.Or(meth, `[^/]+`)}
		default:
			return out, 0, 0, fmt.Errorf("method match type %s is not supported", t)
		}
	}
	seen := map[string]bool{}
	for _, h := range m.Headers {
		name := strings.ToLower(string(h.Name))
		if seen[name] {
			continue
		}
		seen[name] = true
		v, err := stringMatch(deref(h.Type, gwapiv1.GRPCHeaderMatchExact) == gwapiv1.GRPCHeaderMatchRegularExpression, h.Value)
		if err != nil {
			return out, 0, 0, fmt.Errorf("header %s: %w", h.Name, err)
		}
		out.Headers = append(out.Headers, ir.HeaderMatch{Name: name, Value: v})
	}
	return out, service, method, nil
}

// grpcPrecedence orders a host's GRPCRoute entries as Gateway API says
// (after the hostname, which serving compares): the longest service, the
// longest method, the most header matches; then the oldest Route, the
// Route first by namespace/name, the rule and the match first in it.
func grpcPrecedence(a, b *entry) int {
	return cmp.Or(cmp.Compare(b.service, a.service), cmp.Compare(b.grpcMethod, a.grpcMethod), cmp.Compare(b.headers, a.headers),
		olderFirst(a.route, b.route), cmp.Compare(a.route.namespace, b.route.namespace), cmp.Compare(a.route.name, b.route.name),
		cmp.Compare(a.rule, b.rule), cmp.Compare(a.m, b.m))
}
